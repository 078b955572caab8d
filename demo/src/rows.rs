//! One metrics.csv row (the 29 App. B columns, plus the backup-only `error` column) and its exact text form.

use crate::catalog::{Model, Workload};
use crate::pyrepr::{push_field, push_int, py_float};
use cellscope_model::RequestSample;
use std::sync::Arc;

/// The 29 columns in Appendix B order (the real order is unknown, readers go by header name).
pub(crate) const COLUMNS: [&str; 29] = [
    "run_id",
    "suite",
    "phase",
    "backend",
    "model",
    "hf_id",
    "model_tier",
    "params_b",
    "precision",
    "workload",
    "prompt_target_tokens",
    "max_new_tokens",
    "n_agents",
    "rep",
    "agent_id",
    "request_id",
    "request_sequence",
    "in_flight_at_submit",
    "wall_ms",
    "prompt_tokens",
    "completion_tokens",
    "prefill_ms",
    "decode_ms",
    "effective_tps",
    "gpu_tokens_per_s",
    "ttft_ms",
    "submit_time_s",
    "complete_time_s",
    "status",
];

/// Where a cell sits: everything that is constant over its rows.
#[derive(Clone, Debug)]
pub(crate) struct CellIdentity {
    pub run_id: Arc<str>,
    pub suite: &'static str,
    pub phase: &'static str,
    pub backend: &'static str,
    pub model: Model,
    pub workload: Workload,
    pub n_agents: u32,
    pub rep: u32,
}

/// The measured part of a real request row.
#[derive(Clone, Debug)]
pub(crate) struct Measurement {
    pub agent_id: u32,
    pub request_id: u32,
    pub request_sequence: u32,
    pub in_flight_at_submit: u32,
    pub wall_ms: f64,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub prefill_ms: Option<f64>,
    pub decode_ms: Option<f64>,
    pub effective_tps: f64,
    pub gpu_tokens_per_s: Option<f64>,
    pub ttft_ms: Option<f64>,
    pub submit_time_s: f64,
    pub complete_time_s: f64,
    pub status: &'static str,
    /// Only written in the pre-refill backup's extra column (the report documents no error column).
    pub error: Option<String>,
}

#[derive(Clone, Debug)]
pub(crate) enum RowBody {
    Request(Measurement),
    /// The V1 skip sentinel: identity fields set, every synthetic field its App. B zero or empty string.
    Skip,
}

#[derive(Clone, Debug)]
pub(crate) struct MetricsRow {
    pub cell: Arc<CellIdentity>,
    pub body: RowBody,
}

impl Measurement {
    /// The model crate's view of the request (whatever its status).
    pub(crate) fn sample(&self) -> RequestSample {
        RequestSample {
            wall_ms: self.wall_ms,
            ttft_ms: self.ttft_ms,
            prompt_tokens: f64::from(self.prompt_tokens),
            completion_tokens: f64::from(self.completion_tokens),
            submit_time_s: self.submit_time_s,
            complete_time_s: self.complete_time_s,
        }
    }
}

impl MetricsRow {
    /// The model crate's view of an `ok` request row (`None` for skip rows and failures).
    pub(crate) fn sample(&self) -> Option<RequestSample> {
        match &self.body {
            RowBody::Request(m) if m.status == "ok" => Some(m.sample()),
            _ => None,
        }
    }

    pub(crate) fn measurement(&self) -> Option<&Measurement> {
        match &self.body {
            RowBody::Request(m) => Some(m),
            RowBody::Skip => None,
        }
    }

    /// Appends the CSV record (CRLF). With `error_column`, a trailing `error` field follows (empty unless set).
    pub(crate) fn write_csv(&self, line: &mut String, error_column: bool) {
        let cell = &self.cell;
        for text in [
            &*cell.run_id,
            cell.suite,
            cell.phase,
            cell.backend,
            cell.model.name,
            cell.model.hf_id,
            cell.model.tier,
            cell.model.params_b,
            "FP16",
            cell.workload.name,
        ] {
            push_field(line, text);
            line.push(',');
        }
        for value in [
            cell.workload.prompt_target_tokens,
            cell.workload.max_new_tokens,
            cell.n_agents,
            cell.rep,
        ] {
            push_int(line, value);
            line.push(',');
        }
        match &self.body {
            RowBody::Skip => {
                // App. B: '0' for the numeric sentinels (an int zero, as the protocol wrote it), '' for the
                // nullable ones, status 'ok' so _load_completed_keys treats the cell as done.
                line.push_str("0,0,0,0,0,0,0,,,0,,,0,0,ok");
            }
            RowBody::Request(m) => {
                for value in [
                    m.agent_id,
                    m.request_id,
                    m.request_sequence,
                    m.in_flight_at_submit,
                ] {
                    push_int(line, value);
                    line.push(',');
                }
                line.push_str(&py_float(m.wall_ms));
                line.push(',');
                push_int(line, m.prompt_tokens);
                line.push(',');
                push_int(line, m.completion_tokens);
                for value in [m.prefill_ms, m.decode_ms] {
                    line.push(',');
                    if let Some(value) = value {
                        line.push_str(&py_float(value));
                    }
                }
                line.push(',');
                line.push_str(&py_float(m.effective_tps));
                for value in [m.gpu_tokens_per_s, m.ttft_ms] {
                    line.push(',');
                    if let Some(value) = value {
                        line.push_str(&py_float(value));
                    }
                }
                line.push(',');
                line.push_str(&py_float(m.submit_time_s));
                line.push(',');
                line.push_str(&py_float(m.complete_time_s));
                line.push(',');
                push_field(line, m.status);
            }
        }
        if error_column {
            line.push(',');
            if let Some(error) = self.measurement().and_then(|m| m.error.as_deref()) {
                push_field(line, error);
            }
        }
        line.push_str("\r\n");
    }

    /// The same row as one JSON object (the cell_worker sidecar format, whose rows the report says match
    /// metrics.csv's): numbers as numbers, nulls as null.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        let cell = &self.cell;
        let mut object = serde_json::Map::new();
        let mut put = |key: &str, value: serde_json::Value| {
            object.insert(key.to_string(), value);
        };
        put("run_id", cell.run_id.as_ref().into());
        put("suite", cell.suite.into());
        put("phase", cell.phase.into());
        put("backend", cell.backend.into());
        put("model", cell.model.name.into());
        put("workload", cell.workload.name.into());
        put("n_agents", cell.n_agents.into());
        put("rep", cell.rep.into());
        if let Some(m) = self.measurement() {
            put("agent_id", m.agent_id.into());
            put("request_id", m.request_id.into());
            put("request_sequence", m.request_sequence.into());
            put("in_flight_at_submit", m.in_flight_at_submit.into());
            put("wall_ms", m.wall_ms.into());
            put("prompt_tokens", m.prompt_tokens.into());
            put("completion_tokens", m.completion_tokens.into());
            put("prefill_ms", m.prefill_ms.into());
            put("decode_ms", m.decode_ms.into());
            put("effective_tps", m.effective_tps.into());
            put("gpu_tokens_per_s", m.gpu_tokens_per_s.into());
            put("ttft_ms", m.ttft_ms.into());
            put("submit_time_s", m.submit_time_s.into());
            put("complete_time_s", m.complete_time_s.into());
            put("status", m.status.into());
        }
        serde_json::Value::Object(object)
    }
}

/// The header line; `error_column` adds the backup-only trailing `error` column.
pub(crate) fn header(error_column: bool) -> String {
    let mut line = COLUMNS.join(",");
    if error_column {
        line.push_str(",error");
    }
    line.push_str("\r\n");
    line
}

/// A whole metrics.csv.
pub(crate) fn metrics_csv(rows: &[MetricsRow], error_column: bool) -> String {
    let mut text = String::with_capacity(rows.len() * 330 + 400);
    text.push_str(&header(error_column));
    for row in rows {
        row.write_csv(&mut text, error_column);
    }
    text
}
