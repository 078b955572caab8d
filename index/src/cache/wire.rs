//! How read results go into a cache entry. The readers' types carry no serde of their own: each has its mirror
//! here, field for field, converted both ways, so the entry's layout is the cache's alone. Names the code keeps as
//! `&'static str` (a format, a rejection kind) are written as text and read back only when the running code knows
//! them, JSON values as their text, and row offsets as differences (they grow through a file, so the differences
//! are small numbers, which the entry's variable-length integers keep to a byte or two).

use crate::run::expected::{Manifest, ManifestCell, Plan};
use crate::run::parsed::{ExternalCell, FileRejected, IdCount, ParsedCell, ParsedMetrics};
use crate::run::{Note, SpliceDiff};
use cellscope_model::api::{BackupComparison, HistoryEvent, RunStart, RunStartSource};
use cellscope_model::key::CellCoordinates;
use cellscope_model::origin::{CellOrigin, FigureOrigin};
use cellscope_model::stats::CellStats;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A name the code holds as a `&'static str` (a rejection kind, a format). Spelled as an alias in the mirrors
/// because serde takes a field written `&'static str` for text borrowed from its input, which a cache entry read
/// into a buffer cannot lend; such fields go through [`format_name`] or [`rejection_kind`] instead.
type StaticName = &'static str;

/// [`ParsedMetrics`] as an entry holds it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Metrics {
    cells: Vec<(CellCoordinates, Cell)>,
    records: u64,
    malformed_rows: u64,
    header: Vec<String>,
}

/// [`ParsedCell`] as an entry holds it: its row offsets as differences.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Cell {
    rows: u32,
    ok_rows: u32,
    failed_rows: u32,
    skip_rows: u32,
    malformed_rows: u32,
    failed_by_status: BTreeMap<String, u32>,
    row_run_ids: BTreeMap<String, Count>,
    first_line: u64,
    first_row_line: u64,
    #[serde(with = "increasing")]
    row_offsets: Vec<u64>,
    stats: CellStats,
    external: Option<Box<External>>,
}

/// [`IdCount`] as an entry holds it.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Count {
    rows: u32,
    first_offset: u64,
}

/// [`ExternalCell`] as an entry holds it: its format by name.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct External {
    #[serde(with = "format_name")]
    format: StaticName,
    file: String,
    file_bytes: u64,
    record: u32,
    expected_rows: Option<u32>,
    figures: FigureOrigin,
    origin: CellOrigin,
}

/// [`FileRejected`] as an entry holds it: its kind by name.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Rejected {
    #[serde(with = "rejection_kind")]
    kind: StaticName,
    line: Option<u64>,
    message: String,
}

/// [`Manifest`] as an entry holds it: its JSON values as text.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct ManifestEntry {
    status: Option<String>,
    #[serde(with = "json_text")]
    environment: Option<serde_json::Value>,
    #[serde(with = "json_text")]
    max_model_len: Option<serde_json::Value>,
    cells: BTreeMap<CellCoordinates, ManifestCellEntry>,
}

/// [`ManifestCell`] as an entry holds it.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct ManifestCellEntry {
    status: Option<String>,
    expected_rows: Option<u32>,
    rows_written: Option<u32>,
    fallback: bool,
    history: Vec<HistoryEvent>,
}

/// [`Plan`] as an entry holds it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct PlanEntry {
    cells: BTreeMap<CellCoordinates, Option<u32>>,
    unselected: usize,
}

/// [`Note`] as an entry holds it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct NoteEntry {
    path: String,
    text: String,
    names: BTreeMap<String, u64>,
}

/// [`SpliceDiff`] as an entry holds it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Splice {
    comparison: BackupComparison,
    replaced_cells: BTreeMap<CellCoordinates, u32>,
    replaced_offsets: BTreeMap<CellCoordinates, Vec<u64>>,
}

impl From<ParsedMetrics> for Metrics {
    fn from(parsed: ParsedMetrics) -> Metrics {
        let ParsedMetrics {
            cells,
            records,
            malformed_rows,
            header,
        } = parsed;
        Metrics {
            cells: cells
                .into_iter()
                .map(|(coordinates, cell)| (coordinates, Cell::from(cell)))
                .collect(),
            records,
            malformed_rows,
            header,
        }
    }
}

impl From<Metrics> for ParsedMetrics {
    fn from(entry: Metrics) -> ParsedMetrics {
        let Metrics {
            cells,
            records,
            malformed_rows,
            header,
        } = entry;
        ParsedMetrics {
            cells: cells
                .into_iter()
                .map(|(coordinates, cell)| (coordinates, ParsedCell::from(cell)))
                .collect(),
            records,
            malformed_rows,
            header,
        }
    }
}

impl From<ParsedCell> for Cell {
    fn from(cell: ParsedCell) -> Cell {
        let ParsedCell {
            rows,
            ok_rows,
            failed_rows,
            skip_rows,
            malformed_rows,
            failed_by_status,
            row_run_ids,
            first_line,
            first_row_line,
            row_offsets,
            stats,
            external,
        } = cell;
        Cell {
            rows,
            ok_rows,
            failed_rows,
            skip_rows,
            malformed_rows,
            failed_by_status,
            row_run_ids: row_run_ids
                .into_iter()
                .map(|(id, count)| {
                    let IdCount { rows, first_offset } = count;
                    (id, Count { rows, first_offset })
                })
                .collect(),
            first_line,
            first_row_line,
            row_offsets,
            stats,
            external: external.map(|external| Box::new(External::from(*external))),
        }
    }
}

impl From<Cell> for ParsedCell {
    fn from(entry: Cell) -> ParsedCell {
        let Cell {
            rows,
            ok_rows,
            failed_rows,
            skip_rows,
            malformed_rows,
            failed_by_status,
            row_run_ids,
            first_line,
            first_row_line,
            row_offsets,
            stats,
            external,
        } = entry;
        ParsedCell {
            rows,
            ok_rows,
            failed_rows,
            skip_rows,
            malformed_rows,
            failed_by_status,
            row_run_ids: row_run_ids
                .into_iter()
                .map(|(id, Count { rows, first_offset })| (id, IdCount { rows, first_offset }))
                .collect(),
            first_line,
            first_row_line,
            row_offsets,
            stats,
            external: external.map(|external| Box::new(ExternalCell::from(*external))),
        }
    }
}

impl From<ExternalCell> for External {
    fn from(cell: ExternalCell) -> External {
        let ExternalCell {
            format,
            file,
            file_bytes,
            record,
            expected_rows,
            figures,
            origin,
        } = cell;
        External {
            format,
            file,
            file_bytes,
            record,
            expected_rows,
            figures,
            origin,
        }
    }
}

impl From<External> for ExternalCell {
    fn from(entry: External) -> ExternalCell {
        let External {
            format,
            file,
            file_bytes,
            record,
            expected_rows,
            figures,
            origin,
        } = entry;
        ExternalCell {
            format,
            file,
            file_bytes,
            record,
            expected_rows,
            figures,
            origin,
        }
    }
}

impl From<FileRejected> for Rejected {
    fn from(rejected: FileRejected) -> Rejected {
        let FileRejected {
            kind,
            line,
            message,
        } = rejected;
        Rejected {
            kind,
            line,
            message,
        }
    }
}

impl From<Rejected> for FileRejected {
    fn from(entry: Rejected) -> FileRejected {
        let Rejected {
            kind,
            line,
            message,
        } = entry;
        FileRejected {
            kind,
            line,
            message,
        }
    }
}

impl From<Manifest> for ManifestEntry {
    fn from(manifest: Manifest) -> ManifestEntry {
        let Manifest {
            status,
            environment,
            max_model_len,
            started_at: _,
            cells,
        } = manifest;
        ManifestEntry {
            status,
            environment,
            max_model_len,
            cells: cells
                .into_iter()
                .map(|(coordinates, cell)| {
                    let ManifestCell {
                        status,
                        expected_rows,
                        rows_written,
                        fallback,
                        history,
                    } = cell;
                    let entry = ManifestCellEntry {
                        status,
                        expected_rows,
                        rows_written,
                        fallback,
                        history,
                    };
                    (coordinates, entry)
                })
                .collect(),
        }
    }
}

impl From<ManifestEntry> for Manifest {
    fn from(entry: ManifestEntry) -> Manifest {
        let ManifestEntry {
            status,
            environment,
            max_model_len,
            cells,
        } = entry;
        Manifest {
            status,
            environment,
            max_model_len,
            started_at: None,
            cells: cells
                .into_iter()
                .map(|(coordinates, entry)| {
                    let ManifestCellEntry {
                        status,
                        expected_rows,
                        rows_written,
                        fallback,
                        history,
                    } = entry;
                    let cell = ManifestCell {
                        status,
                        expected_rows,
                        rows_written,
                        fallback,
                        history,
                    };
                    (coordinates, cell)
                })
                .collect(),
        }
    }
}

impl From<Plan> for PlanEntry {
    fn from(plan: Plan) -> PlanEntry {
        let Plan { cells, unselected } = plan;
        PlanEntry { cells, unselected }
    }
}

impl From<PlanEntry> for Plan {
    fn from(entry: PlanEntry) -> Plan {
        let PlanEntry { cells, unselected } = entry;
        Plan { cells, unselected }
    }
}

impl From<Note> for NoteEntry {
    fn from(note: Note) -> NoteEntry {
        let Note { path, text, names } = note;
        NoteEntry { path, text, names }
    }
}

impl From<NoteEntry> for Note {
    fn from(entry: NoteEntry) -> Note {
        let NoteEntry { path, text, names } = entry;
        Note { path, text, names }
    }
}

impl From<SpliceDiff> for Splice {
    fn from(diff: SpliceDiff) -> Splice {
        let SpliceDiff {
            comparison,
            replaced_cells,
            replaced_offsets,
        } = diff;
        Splice {
            comparison,
            replaced_cells,
            replaced_offsets,
        }
    }
}

impl From<Splice> for SpliceDiff {
    fn from(entry: Splice) -> SpliceDiff {
        let Splice {
            comparison,
            replaced_cells,
            replaced_offsets,
        } = entry;
        SpliceDiff {
            comparison,
            replaced_cells,
            replaced_offsets,
        }
    }
}

/// `Option<serde_json::Value>` as its JSON text: a compact binary format cannot hold a self-describing value.
/// serde_json's `float_roundtrip` (a workspace feature) makes the text give back the same numbers.
mod json_text {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer>(
        value: &Option<serde_json::Value>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        value
            .as_ref()
            .map(serde_json::Value::to_string)
            .serialize(serializer)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<serde_json::Value>, D::Error> {
        Option::<String>::deserialize(deserializer)?
            .map(|text| serde_json::from_str(&text).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// A format's name, read back as the name of a format this build has.
mod format_name {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        name: &&'static str,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(name)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<&'static str, D::Error> {
        let name = String::deserialize(deserializer)?;
        crate::formats::by_name(&name)
            .map(|format| format.name())
            .ok_or_else(|| serde::de::Error::custom(format!("unknown format {name}")))
    }
}

/// A [`FileRejected`] kind, read back as one the parser gives.
mod rejection_kind {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        kind: &&'static str,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(kind)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<&'static str, D::Error> {
        let kind = String::deserialize(deserializer)?;
        crate::run::parsed::REJECTION_KINDS
            .iter()
            .copied()
            .find(|known| *known == kind)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown rejection kind {kind}")))
    }
}

/// Offsets in file order as the difference to the one before (wrapping, so any sequence comes back exactly).
mod increasing {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        offsets: &[u64],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut previous = 0u64;
        serializer.collect_seq(offsets.iter().map(|offset| {
            let difference = offset.wrapping_sub(previous);
            previous = *offset;
            difference
        }))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<u64>, D::Error> {
        let mut offsets = Vec::<u64>::deserialize(deserializer)?;
        let mut previous = 0u64;
        for offset in &mut offsets {
            previous = previous.wrapping_add(*offset);
            *offset = previous;
        }
        Ok(offsets)
    }
}

/// [`RunStart`] as an entry holds it: the API's form is tagged by a field, which a binary format cannot read back.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum StartEntry {
    Recorded {
        at: String,
        file: String,
        key: String,
    },
    RunId {
        at: String,
        id: String,
    },
    FileModified {
        at: String,
        file: String,
    },
}

impl From<RunStart> for StartEntry {
    fn from(start: RunStart) -> StartEntry {
        let RunStart { at, source } = start;
        match source {
            RunStartSource::Recorded { file, key } => StartEntry::Recorded { at, file, key },
            RunStartSource::RunId { id } => StartEntry::RunId { at, id },
            RunStartSource::FileModified { file } => StartEntry::FileModified { at, file },
        }
    }
}

impl From<StartEntry> for RunStart {
    fn from(entry: StartEntry) -> RunStart {
        let (at, source) = match entry {
            StartEntry::Recorded { at, file, key } => (at, RunStartSource::Recorded { file, key }),
            StartEntry::RunId { at, id } => (at, RunStartSource::RunId { id }),
            StartEntry::FileModified { at, file } => (at, RunStartSource::FileModified { file }),
        };
        RunStart { at, source }
    }
}
