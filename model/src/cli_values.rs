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

impl std::fmt::Display for Per {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.map_or("none", Dimension::name))
    }
}

/// `--by`: a dimension, or a deployment parameter by name (`tp`, `max_num_seqs`). The data is read after the
/// arguments, so any parameter name is taken here and a value no cell has is refused then, as is a dimension a
/// comparison cannot contrast.
pub fn contrasted(text: &str) -> Result<Dimension, String> {
    Dimension::parse(text)
        .or_else(|| Dimension::param(text))
        .ok_or_else(|| {
            format!(
                "expected one of {}, or a deployment parameter (tp, precision, …)",
                CONTRASTABLE.map(Dimension::name).join(", ")
            )
        })
}

/// `--per`: as [`contrasted`], or `none` for one group.
pub fn grouped(text: &str) -> Result<Per, String> {
    if text == "none" {
        return Ok(Per(None));
    }
    contrasted(text)
        .map(|dimension| Per(Some(dimension)))
        .map_err(|reason| format!("{reason}, or none"))
}

/// `--param NAME=VALUES`: a deployment parameter and the values a filter on it accepts (comma-separated).
pub fn param_filter(text: &str) -> Result<(Dimension, Vec<String>), String> {
    let (name, values) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}`: expected NAME=VALUES (tp=4,8)"))?;
    let dimension = Dimension::param(name.trim())
        .ok_or_else(|| format!("`{name}` cannot be a deployment parameter"))?;
    let values: Vec<String> = values
        .split(',')
        .map(|value| value.trim().to_string())
        .filter(|value| !value.is_empty())
        .collect();
    Ok((dimension, values))
}
