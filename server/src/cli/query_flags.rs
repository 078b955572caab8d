//! The query flags of `cells`, `requests` and `compare`, declared from the model's table of each endpoint's
//! parameters ([`Endpoint::flags`]) and read by the query's one parser, so that a flag takes what the API
//! parameter of its name takes and is refused for the same reason.

use anyhow::bail;
use cellscope_model::filter::unstated_params;
use cellscope_model::query::{Endpoint, Flag, PARAM_FLAG, Query};
use cellscope_model::{CellSummary, Dimension};
use clap::error::ErrorKind;
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use std::marker::PhantomData;

/// The endpoint whose parameters a command's flags are.
pub(super) trait Surface {
    /// The endpoint.
    const ENDPOINT: Endpoint;
}

/// The flags of `/api/cells`.
pub(super) struct Cells;
/// The flags of `/api/requests`.
pub(super) struct Requests;
/// The flags of `/api/compare`.
pub(super) struct Compare;
/// The flags of `/api/history`.
pub(super) struct History;

impl Surface for Cells {
    const ENDPOINT: Endpoint = Endpoint::Cells;
}
impl Surface for Requests {
    const ENDPOINT: Endpoint = Endpoint::Requests;
}
impl Surface for Compare {
    const ENDPOINT: Endpoint = Endpoint::Compare;
}
impl Surface for History {
    const ENDPOINT: Endpoint = Endpoint::History;
}

/// The query a command's flags ask, as the endpoint `S` reads its parameters into one.
pub(super) struct QueryFlags<S> {
    /// The query.
    pub(super) query: Query,
    surface: PhantomData<S>,
}

impl<S: Surface> Args for QueryFlags<S> {
    fn augment_args(command: Command) -> Command {
        S::ENDPOINT
            .flags()
            .into_iter()
            .chain([PARAM_FLAG])
            .fold(command, |command, flag| command.arg(argument(flag)))
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

impl<S: Surface> FromArgMatches for QueryFlags<S> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let pairs = pairs(S::ENDPOINT, matches)?;
        let query = Query::from_pairs(&pairs, S::ENDPOINT)
            .map_err(|error| clap::Error::raw(ErrorKind::ValueValidation, format!("{error}\n")))?;
        Ok(QueryFlags {
            query,
            surface: PhantomData,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

/// The flag of one parameter: repeatable, each value a list as the parameter takes it; another name of the
/// parameter is taken too, unlisted (the help names the one worth knowing).
fn argument(flag: Flag) -> Arg {
    let argument = Arg::new(flag.name)
        .long(flag.name)
        .value_name(flag.value_name)
        .help(flag.help)
        .num_args(1)
        .action(ArgAction::Append);
    match flag.alias {
        Some(alias) => argument.alias(alias),
        None => argument,
    }
}

/// The flags given, as the (name, value) pairs of a query string in the table's order; `--param NAME=VALUES` is
/// the pair `NAME=VALUES`, as a link filters on a parameter.
fn pairs(endpoint: Endpoint, matches: &ArgMatches) -> Result<Vec<(String, String)>, clap::Error> {
    let mut pairs = Vec::new();
    for flag in endpoint.flags() {
        for value in given(matches, flag.name) {
            if flag.names_dimension {
                intern_param(value);
            }
            pairs.push((flag.name.to_string(), value.to_string()));
        }
    }
    for value in given(matches, PARAM_FLAG.name) {
        pairs.push(param_pair(value)?);
    }
    Ok(pairs)
}

/// Every value given to the flag `name`, in order.
fn given<'a>(matches: &'a ArgMatches, name: &str) -> impl Iterator<Item = &'a str> {
    matches
        .get_many::<String>(name)
        .into_iter()
        .flatten()
        .map(String::as_str)
}

/// A dimension's name that is none of the key's own is a deployment parameter: interned so the query reads it,
/// since the data that states it is read after the flags (one no cell states is refused then).
fn intern_param(name: &str) {
    if Dimension::parse(name).is_none() {
        let _ = Dimension::param(name.trim());
    }
}

/// `--param NAME=VALUES` as the pair a link writes, `NAME=VALUES`.
fn param_pair(text: &str) -> Result<(String, String), clap::Error> {
    let refuse = |reason: String| clap::Error::raw(ErrorKind::ValueValidation, reason + "\n");
    let (name, values) = text
        .split_once('=')
        .ok_or_else(|| refuse(format!("--param `{text}`: expected NAME=VALUES (tp=4,8)")))?;
    let name = name.trim();
    match Dimension::param(name) {
        Some(_) => Ok((name.to_string(), values.to_string())),
        None => Err(refuse(format!(
            "--param `{name}`: cannot be a deployment parameter (a dimension of the key has that name)"
        ))),
    }
}

/// Refuses a deployment parameter the query filters on that is neither well known nor stated by any cell of
/// the data, as `/api/cells` refuses an unknown parameter: the data is read after the flags, so this is checked
/// once it is.
pub(super) fn refuse_unstated_params(query: &Query, cells: &[CellSummary]) -> anyhow::Result<()> {
    match unstated_params(&query.filter, cells).as_slice() {
        [] => Ok(()),
        names => bail!(
            "no cell of this data states the deployment parameter {} and it is not a well-known one",
            names
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
