//! The model's names as the CLI's typed values (`--format`): each clap value is the type's own name, so the command
//! line spells an export format as links and the API do. The query's flags are declared from its parameter table
//! ([`crate::query::Flag`]) and read by the query's parser instead.

use crate::query::Format;
use clap::ValueEnum;
use clap::builder::PossibleValue;

impl ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        &Format::ALL
    }
    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.name()))
    }
}
