//! Row-by-row comparison of a spliced master `metrics.csv` with its pre-refill backup.
//!
//! A refill is honest when exactly the failed rows were replaced and nothing else: every row that differs must
//! sit at the same position, belong to the same cell, and have been non-ok in the backup. Anything else is
//! reported as a problem, loudly, because it means the splice touched data it should not have.

use super::metrics_csv::RowCellKey;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

const KEY_COLUMNS: [&str; 7] = [
    "suite", "phase", "backend", "model", "workload", "n_agents", "rep",
];
/// Problems listed one by one; beyond this they are counted.
const MAX_LISTED_PROBLEMS: usize = 20;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SpliceDiff {
    pub master_rows: u64,
    pub backup_rows: u64,
    /// Rows at the same position whose common columns differ.
    pub replaced_rows: u64,
    /// Status in the backup of each replaced row → count (all non-ok for an honest refill).
    pub replaced_backup_status: BTreeMap<String, u64>,
    /// `run_id` of the replacing master rows → count.
    pub replacement_run_ids: BTreeMap<String, u64>,
    /// Replaced rows per cell.
    #[serde(skip)]
    pub replaced_cells: BTreeMap<RowCellKey, u32>,
    /// Byte offsets in the backup of the replaced rows, per cell (the rows the inspector shows as `replaced`).
    #[serde(skip)]
    pub replaced_offsets: BTreeMap<RowCellKey, Vec<u64>>,
    /// Replaced rows that were `ok` in the backup (data that was fine got overwritten).
    pub replaced_ok_rows: u64,
    /// Replaced rows whose cell differs between master and backup.
    pub moved_rows: u64,
    /// `(line, message)` of each problem, the first few of them.
    pub problems: Vec<(u64, String)>,
    pub problem_count: u64,
}

impl SpliceDiff {
    fn problem(&mut self, line: u64, message: String) {
        self.problem_count += 1;
        if self.problems.len() < MAX_LISTED_PROBLEMS {
            self.problems.push((line, message));
        }
    }
}

fn reader(bytes: &[u8]) -> csv::Reader<&[u8]> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes)
}

fn header(reader: &mut csv::Reader<&[u8]>) -> Result<Vec<String>, String> {
    let mut record = csv::ByteRecord::new();
    match reader.read_byte_record(&mut record) {
        Ok(true) => Ok(record
            .iter()
            .map(|field| String::from_utf8_lossy(field).trim().to_string())
            .collect()),
        Ok(false) => Err("no header line".into()),
        Err(error) => Err(format!("cannot read the header: {error}")),
    }
}

fn key_of(record: &csv::ByteRecord, key_positions: &[usize; 7]) -> Option<RowCellKey> {
    let text = |index: usize| {
        std::str::from_utf8(record.get(key_positions[index])?)
            .ok()
            .map(str::to_string)
    };
    Some(RowCellKey {
        suite: text(0)?,
        phase: text(1)?,
        backend: text(2)?,
        model: text(3)?,
        workload: text(4)?,
        n: text(5)?.trim().parse().ok()?,
        rep: text(6)?.trim().parse().ok()?,
    })
}

/// Compares `master` and `backup` (whole files) by position over the columns both headers share.
pub fn diff(master: &[u8], backup: &[u8]) -> Result<SpliceDiff, String> {
    let mut master_reader = reader(master);
    let mut backup_reader = reader(backup);
    let master_header =
        header(&mut master_reader).map_err(|error| format!("master metrics.csv: {error}"))?;
    let backup_header =
        header(&mut backup_reader).map_err(|error| format!("backup metrics.csv: {error}"))?;
    let backup_positions: HashMap<&str, usize> = backup_header
        .iter()
        .enumerate()
        .map(|(position, name)| (name.as_str(), position))
        .collect();
    let master_positions: HashMap<&str, usize> = master_header
        .iter()
        .enumerate()
        .map(|(position, name)| (name.as_str(), position))
        .collect();
    // Columns compared: those both files have. A column only one file has (such as an `error` text column in
    // the backup) cannot tell a replacement apart.
    let common: Vec<(usize, usize)> = master_header
        .iter()
        .enumerate()
        .filter_map(|(position, name)| {
            backup_positions
                .get(name.as_str())
                .map(|other| (position, *other))
        })
        .collect();
    let position_in = |positions: &HashMap<&str, usize>, name: &str| {
        positions
            .get(name)
            .copied()
            .ok_or_else(|| format!("column `{name}` missing"))
    };
    let mut master_key = [0usize; 7];
    let mut backup_key = [0usize; 7];
    for (index, name) in KEY_COLUMNS.iter().enumerate() {
        master_key[index] =
            position_in(&master_positions, name).map_err(|error| format!("master: {error}"))?;
        backup_key[index] =
            position_in(&backup_positions, name).map_err(|error| format!("backup: {error}"))?;
    }
    let master_status =
        position_in(&master_positions, "status").map_err(|error| format!("master: {error}"))?;
    let backup_status =
        position_in(&backup_positions, "status").map_err(|error| format!("backup: {error}"))?;
    let master_run =
        position_in(&master_positions, "run_id").map_err(|error| format!("master: {error}"))?;

    let mut diff = SpliceDiff::default();
    let mut master_record = csv::ByteRecord::new();
    let mut backup_record = csv::ByteRecord::new();
    loop {
        let master_more = master_reader
            .read_byte_record(&mut master_record)
            .map_err(|error| error.to_string())?;
        let backup_more = backup_reader
            .read_byte_record(&mut backup_record)
            .map_err(|error| error.to_string())?;
        match (master_more, backup_more) {
            (false, false) => break,
            (true, false) => {
                diff.master_rows += 1;
                continue;
            }
            (false, true) => {
                diff.backup_rows += 1;
                continue;
            }
            (true, true) => {
                diff.master_rows += 1;
                diff.backup_rows += 1;
            }
        }
        let same = common.iter().all(|&(master_column, backup_column)| {
            master_record.get(master_column) == backup_record.get(backup_column)
        });
        if same {
            continue;
        }
        let line = master_record
            .position()
            .map_or(0, |position| position.line());
        diff.replaced_rows += 1;
        let status = String::from_utf8_lossy(backup_record.get(backup_status).unwrap_or_default())
            .into_owned();
        let run_id =
            String::from_utf8_lossy(master_record.get(master_run).unwrap_or_default()).into_owned();
        *diff.replacement_run_ids.entry(run_id).or_default() += 1;
        let master_cell = key_of(&master_record, &master_key);
        let backup_cell = key_of(&backup_record, &backup_key);
        if status == "ok" {
            diff.replaced_ok_rows += 1;
            diff.problem(
                line,
                "the backup row was `ok`: a row that had not failed was replaced".into(),
            );
        }
        if master_cell != backup_cell {
            diff.moved_rows += 1;
            diff.problem(
                line,
                "master and backup rows at this position belong to different cells".into(),
            );
        } else if master_record.get(master_status) != Some(b"ok".as_slice()) {
            diff.problem(line, "the replacing master row is not `ok`".into());
        }
        *diff.replaced_backup_status.entry(status).or_default() += 1;
        if let Some(cell) = master_cell {
            let offset = backup_record
                .position()
                .map_or(0, |position| position.byte());
            diff.replaced_offsets
                .entry(cell.clone())
                .or_default()
                .push(offset);
            *diff.replaced_cells.entry(cell).or_default() += 1;
        }
    }
    if diff.master_rows != diff.backup_rows {
        let message = format!(
            "the master has {} rows and the backup {}; a splice in place keeps the row count",
            diff.master_rows, diff.backup_rows
        );
        diff.problem(0, message);
    }
    Ok(diff)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "run_id,suite,phase,backend,model,workload,n_agents,rep,wall_ms,status";

    #[test]
    fn only_failed_rows_replaced_in_place_is_clean() {
        let backup = format!(
            "{HEADER},error\nm,s,p,b,x,w,1,0,10.0,ok,\nm,s,p,b,y,w,1,0,3.0,http_400,too long\n"
        );
        let master = format!("{HEADER}\nm,s,p,b,x,w,1,0,10.0,ok\nr,s,p,b,y,w,1,0,900.0,ok\n");
        let diff = diff(master.as_bytes(), backup.as_bytes()).unwrap();
        assert_eq!(diff.replaced_rows, 1);
        assert_eq!(diff.replaced_backup_status.get("http_400"), Some(&1));
        assert_eq!(diff.replacement_run_ids.get("r"), Some(&1));
        assert_eq!(diff.problem_count, 0);
        assert_eq!(diff.replaced_cells.values().sum::<u32>(), 1);
    }

    #[test]
    fn replacing_an_ok_row_or_moving_a_cell_is_a_problem() {
        let backup = format!("{HEADER}\nm,s,p,b,x,w,1,0,10.0,ok\nm,s,p,b,y,w,1,0,3.0,http_400\n");
        let master = format!(
            "{HEADER}\nm,s,p,b,x,w,1,0,11.0,ok\nr,s,p,b,z,w,1,0,900.0,ok\nm,s,p,b,z,w,1,0,1.0,ok\n"
        );
        let diff = diff(master.as_bytes(), backup.as_bytes()).unwrap();
        assert_eq!(
            (diff.replaced_rows, diff.replaced_ok_rows, diff.moved_rows),
            (2, 1, 1)
        );
        assert_eq!(diff.problem_count, 3, "{:?}", diff.problems);
        assert_eq!(diff.problems[0].0, 2);
    }
}
#[cfg(test)]
mod probe {
    #[test]
    fn probe_line() {
        let header = "run_id,suite,phase,backend,model,workload,n_agents,rep,wall_ms,status";
        let mut master = format!("{header}\n");
        let mut backup = format!("{header}\n");
        for line in 2..=100 {
            master.push_str(&format!("m,s,p,b,x,w,1,0,{line}.0,ok\n"));
            if line == 92 {
                backup.push_str(&format!("m,s,p,b,x,w,1,0,{line}.0,http_400\n"));
            } else {
                backup.push_str(&format!("m,s,p,b,x,w,1,0,{line}.0,ok\n"));
            }
        }
        let diff = super::diff(master.as_bytes(), backup.as_bytes()).unwrap();
        eprintln!("{:?} {:?}", diff.problems, diff.replaced_rows);
        let crlf_m = master.replace('\n', "\r\n");
        let diff = super::diff(crlf_m.as_bytes(), backup.as_bytes()).unwrap();
        eprintln!("crlf {:?}", diff.problems);
    }
}
