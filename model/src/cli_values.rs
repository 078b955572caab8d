//! The model's names as the CLI's typed values (`--format`, `--by`, `--metric`, `--include`): each clap value
//! is the type's own name, so the command line spells a dimension, a metric or a format as links and the API do.

use crate::key::Dimension;
use crate::metric::Metric;
use crate::query::{CONTRASTABLE, Format, Include};
use clap::ValueEnum;
use clap::builder::PossibleValue;

/// Implements [`ValueEnum`] for a type with `ALL` and `name()`.
macro_rules! value_enum {
    ($type:ty) => {
        impl ValueEnum for $type {
            fn value_variants<'a>() -> &'a [Self] {
                &<$type>::ALL
            }
            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(PossibleValue::new(self.name()))
            }
        }
    };
}

value_enum!(Format);
value_enum!(Dimension);
value_enum!(Metric);
value_enum!(Include);

/// `--per`: the dimension a comparison groups by, or `none` for one group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Per(pub Option<Dimension>);

/// Every `--per` value: each dimension a comparison can group by, then `none`.
const PER_VALUES: [Per; 7] = {
    let mut values = [Per(None); 7];
    let mut position = 0;
    while position < CONTRASTABLE.len() {
        values[position] = Per(Some(CONTRASTABLE[position]));
        position += 1;
    }
    values
};

impl ValueEnum for Per {
    fn value_variants<'a>() -> &'a [Self] {
        &PER_VALUES
    }
    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.map_or("none", Dimension::name)))
    }
}
