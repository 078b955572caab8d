//! GenAI-Perf CSV exports committed without their JSON: `external/genai-perf-csv/artifacts/<model>-openai-chat-
//! concurrency<N>/profile_export_genai_perf.csv` at two concurrencies, written as GenAI-Perf's CSV exporter does
//! (a metrics table, a blank line, a table of scalars; `f"{v:,.2f}"` numbers, quoted once they carry a thousands
//! separator). The figures come from a simple model of one server whose TPOT grows with its batch.

use super::{Counts, Files};

/// The artifact directory of concurrency `n`, relative to the data root.
fn directory(n: u32) -> String {
    format!(
        "external/genai-perf-csv/artifacts/mistralai_Mistral-7B-Instruct-v0.3-openai-chat-concurrency{n}"
    )
}

const CONCURRENCIES: [u32; 2] = [4, 32];
const OUTPUT_TOKENS: f64 = 256.0;
const INPUT_TOKENS: f64 = 1000.0;

/// `1,019.69` as Python's `f"{v:,.2f}"` writes it, quoted by the CSV writer when it holds a comma.
fn figure(value: f64) -> String {
    let text = format!("{value:.2}");
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, "00"));
    let digits: Vec<char> = whole.chars().collect();
    let mut grouped = String::new();
    for (index, digit) in digits.iter().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(*digit);
    }
    if grouped.contains(',') {
        format!("\"{grouped}.{fraction}\"")
    } else {
        format!("{grouped}.{fraction}")
    }
}

/// A metric row: the mean and the tool's other statistics spread around it by a fixed shape.
fn metric_row(name: &str, mean: f64) -> String {
    let spread = [1.0, 0.7, 1.9, 1.6, 1.4, 1.25, 1.1, 0.98, 0.88];
    let cells: Vec<String> = spread.iter().map(|factor| figure(mean * factor)).collect();
    format!("{name},{}\n", cells.join(","))
}

fn export(n: u32) -> String {
    let c = f64::from(n);
    let tpot_ms = 12.0 * (1.0 + c / 40.0);
    let ttft_ms = 35.0 + 6.0 * c;
    let latency_ms = ttft_ms + tpot_ms * (OUTPUT_TOKENS - 1.0);
    let requests_per_s = c / (latency_ms / 1000.0);
    let mut text = String::from("Metric,avg,min,max,p99,p95,p90,p75,p50,p25\n");
    text += &metric_row("Time To First Token (ms)", ttft_ms);
    text += &metric_row("Inter Token Latency (ms)", tpot_ms);
    text += &metric_row("Request Latency (ms)", latency_ms);
    text += &metric_row("Output Sequence Length (tokens)", OUTPUT_TOKENS);
    text += &metric_row("Input Sequence Length (tokens)", INPUT_TOKENS);
    text += "\nMetric,Value\n";
    text += &format!(
        "Output Token Throughput (tokens/sec),{}\n",
        figure(requests_per_s * OUTPUT_TOKENS)
    );
    text += &format!("Request Throughput (per sec),{}\n", figure(requests_per_s));
    text
}

/// The exports, with their cell count (GenAI-Perf's export has no request count).
pub(crate) fn files() -> (Files, Counts) {
    let out: Files = CONCURRENCIES
        .iter()
        .map(|n| {
            (
                format!("{}/profile_export_genai_perf.csv", directory(*n)),
                export(*n).into_bytes(),
            )
        })
        .collect();
    let counts = Counts {
        cells: out.len(),
        requests: 0,
    };
    (out, counts)
}

#[cfg(test)]
mod tests {
    #[test]
    fn figures_are_written_as_python_formats_them() {
        assert_eq!(super::figure(1019.694), "\"1,019.69\"");
        assert_eq!(super::figure(12.5), "12.50");
        assert_eq!(super::figure(1234567.0), "\"1,234,567.00\"");
    }
}
