//! Row-by-row comparison of a spliced master `metrics.csv` with its pre-refill backup.
//!
//! A refill is honest when exactly the failed rows were replaced and nothing else: every row that differs must
//! sit at the same position, belong to the same cell, and have been non-ok in the backup. Anything else is
//! reported as a problem, loudly, because it means the splice touched data it should not have.

use super::metrics_csv::line_at;
use crate::run::SpliceDiff;
use crate::run::bytes::without_boms;
use cellscope_model::key::CellCoordinates;
use std::collections::HashMap;

const KEY_COLUMNS: [&str; 7] = [
    "suite", "phase", "backend", "model", "workload", "n_agents", "rep",
];
/// Problems listed one by one; beyond this they are counted.
const MAX_LISTED_PROBLEMS: usize = 20;

/// Where a record is: the file's bytes (without BOM) and the record's byte offset, as the csv reader reports it.
/// Lines are counted from the offset, and only for the problems that are listed: the reader's own line count
/// lags by one after CRLF terminators.
type At<'a> = (&'a [u8], u64);

impl SpliceDiff {
    /// Records a problem at a master row, naming the backup's line when it differs.
    fn problem(&mut self, master: Option<At<'_>>, backup: Option<At<'_>>, message: &str) {
        let comparison = &mut self.comparison;
        comparison.problem_count += 1;
        if comparison.problems.len() < MAX_LISTED_PROBLEMS {
            let line = |at: Option<At<'_>>| at.map_or(0, |(bytes, offset)| line_at(bytes, offset));
            let (master_line, backup_line) = (line(master), line(backup));
            let message = if backup_line != master_line && backup_line > 0 {
                format!("{message} (backup line {backup_line})")
            } else {
                message.to_string()
            };
            comparison.problems.push((master_line, message));
        }
    }
}

fn without_bom(bytes: &[u8]) -> &[u8] {
    without_boms(bytes)
}

fn reader(bytes: &[u8]) -> csv::Reader<&[u8]> {
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

fn key_of(record: &csv::ByteRecord, key_positions: &[usize; 7]) -> Option<CellCoordinates> {
    let text = |index: usize| {
        std::str::from_utf8(record.get(key_positions[index])?)
            .ok()
            .map(str::to_string)
    };
    Some(CellCoordinates {
        suite: text(0)?,
        phase: text(1)?,
        backend: text(2)?,
        model: text(3)?,
        workload: text(4)?,
        config: cellscope_model::config::Config::new(),
        load: cellscope_model::Load::Concurrency(text(5)?.trim().parse().ok()?),
        rep: text(6)?.trim().parse().ok()?,
    })
}

/// Compares `master` and `backup` (whole files) by position over the columns both headers share.
pub(crate) fn diff(master: &[u8], backup: &[u8]) -> Result<SpliceDiff, String> {
    let (master, backup) = (without_bom(master), without_bom(backup));
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
                diff.comparison.master_rows += 1;
                continue;
            }
            (false, true) => {
                diff.comparison.backup_rows += 1;
                continue;
            }
            (true, true) => {
                diff.comparison.master_rows += 1;
                diff.comparison.backup_rows += 1;
            }
        }
        let same = common.iter().all(|&(master_column, backup_column)| {
            master_record.get(master_column) == backup_record.get(backup_column)
        });
        if same {
            continue;
        }
        let master_at = master_record
            .position()
            .map(|position| (master, position.byte()));
        let backup_at = backup_record
            .position()
            .map(|position| (backup, position.byte()));
        diff.comparison.replaced_rows += 1;
        let status = String::from_utf8_lossy(backup_record.get(backup_status).unwrap_or_default())
            .into_owned();
        let run_id =
            String::from_utf8_lossy(master_record.get(master_run).unwrap_or_default()).into_owned();
        *diff
            .comparison
            .replacement_run_ids
            .entry(run_id)
            .or_default() += 1;
        let master_cell = key_of(&master_record, &master_key);
        let backup_cell = key_of(&backup_record, &backup_key);
        if status == "ok" {
            diff.comparison.replaced_ok_rows += 1;
            diff.problem(
                master_at,
                backup_at,
                "the backup row was `ok`: a row that had not failed was replaced",
            );
        }
        if master_cell != backup_cell {
            diff.comparison.moved_rows += 1;
            diff.problem(
                master_at,
                backup_at,
                "master and backup rows at this position belong to different cells",
            );
        } else if master_record.get(master_status) != Some(b"ok".as_slice()) {
            diff.problem(master_at, backup_at, "the replacing master row is not `ok`");
        }
        *diff
            .comparison
            .replaced_backup_status
            .entry(status)
            .or_default() += 1;
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
    if diff.comparison.master_rows != diff.comparison.backup_rows {
        let message = format!(
            "the master has {} rows and the backup {}; a splice in place keeps the row count",
            diff.comparison.master_rows, diff.comparison.backup_rows
        );
        diff.problem(None, None, &message);
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
        assert_eq!(diff.comparison.replaced_rows, 1);
        assert_eq!(
            diff.comparison.replaced_backup_status.get("http_400"),
            Some(&1)
        );
        assert_eq!(diff.comparison.replacement_run_ids.get("r"), Some(&1));
        assert_eq!(diff.comparison.problem_count, 0);
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
            (
                diff.comparison.replaced_rows,
                diff.comparison.replaced_ok_rows,
                diff.comparison.moved_rows
            ),
            (2, 1, 1)
        );
        assert_eq!(
            diff.comparison.problem_count, 3,
            "{:?}",
            diff.comparison.problems
        );
        assert_eq!(diff.comparison.problems[0].0, 2);
    }

    #[test]
    fn problems_name_the_line_of_the_row_in_crlf_files_too() {
        // One row differs, on file line 92 of both files; the backup row was `ok`, so it is a problem.
        let mut master = format!("{HEADER}\n");
        let mut backup = format!("{HEADER}\n");
        for line in 2..=100 {
            master.push_str(&format!("m,s,p,b,x,w,1,0,{line}.0,ok\n"));
            let wall = if line == 92 {
                "92.5".to_string()
            } else {
                format!("{line}.0")
            };
            backup.push_str(&format!("m,s,p,b,x,w,1,0,{wall},ok\n"));
        }
        for (master, backup) in [
            (master.clone(), backup.clone()),
            (master.replace('\n', "\r\n"), backup.clone()),
            (
                master.clone(),
                format!("\u{feff}{}", backup.replace('\n', "\r\n")),
            ),
        ] {
            let diff = diff(master.as_bytes(), backup.as_bytes()).unwrap();
            assert_eq!(diff.comparison.replaced_rows, 1);
            assert_eq!(diff.comparison.problems.len(), 1);
            assert_eq!(
                diff.comparison.problems[0].0, 92,
                "{:?}",
                diff.comparison.problems
            );
            assert!(!diff.comparison.problems[0].1.contains("backup line"));
        }
    }
}
