//! Accelerator strings as results write them (`4xNVIDIA_L40S`, `8xH100-SXM-80GB`, `NVIDIA-H100-80GB-HBM3`, MLPerf
//! system names such as `8xMI300X`, CI runner names such as `b200-trt`), read by one table into the accelerator, how
//! many there are, the board variant and an engine named beside it. docs/formats.md lists the table for users.

use crate::engine;

/// Accelerators known by name, canonical form. A string naming none of them is kept as it is written.
pub static ACCELERATORS: &[&str] = &[
    "h100", "h200", "h20", "h800", "gh200", "a100", "a800", "a10g", "a10", "a30", "a40", "l4",
    "l20", "l40", "l40s", "t4", "v100", "b100", "b200", "b300", "gb200", "gb300", "mi210", "mi250",
    "mi250x", "mi300a", "mi300x", "mi325x", "mi355x", "gaudi2", "gaudi3",
];

/// TPU generations, written `tpu-<generation>` (`tpu v5e`, `tpuv5e` and a bare `v5e` read the same).
pub static TPU_GENERATIONS: &[&str] = &["v4", "v5e", "v5p", "v6e"];

/// An accelerator string read: what it names, how many, which board and which engine beside it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Accelerator {
    /// The canonical accelerator (`h100`, `tpu-v5e`).
    pub name: String,
    /// How many, when the string says (`8xH100`, `H100_x8`, `8gpu`).
    pub count: Option<u32>,
    /// The board variant after the name (form factor, memory, interconnect), lowercase and joined by `-`
    /// (`sxm-80gb`, `80gb-hbm3`), so boards that differ stay apart while the accelerator stays comparable.
    pub variant: Option<String>,
    /// A known engine named beside the accelerator, as CI runner names do (`b200-trt`: `trtllm`).
    pub engine: Option<&'static str>,
}

/// The canonical accelerator of one token (`H100`, `l40s`, `tpuv5e`), if it is one.
pub fn token_name(token: &str) -> Option<String> {
    let lower = token.trim().to_ascii_lowercase();
    if let Some(known) = ACCELERATORS.iter().find(|known| **known == lower) {
        return Some((*known).to_string());
    }
    let generation = lower.strip_prefix("tpu").unwrap_or(&lower);
    let generation = generation.strip_prefix('-').unwrap_or(generation);
    TPU_GENERATIONS
        .iter()
        .find(|known| **known == generation)
        .map(|known| format!("tpu-{known}"))
}

/// Whether a token describes a board variant: a form factor or interconnect (`sxm`, `sxm5`, `pcie`, `nvl`, `oam`),
/// a memory size (`80gb`, `141gb`) or type (`hbm3`, `hbm3e`).
pub fn is_variant_token(token: &str) -> bool {
    let lower = token.to_ascii_lowercase();
    let numbered = |prefix: &str| {
        lower
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.bytes().all(|b| b.is_ascii_digit()))
    };
    let memory = lower
        .strip_suffix("gb")
        .is_some_and(|size| !size.is_empty() && size.bytes().all(|b| b.is_ascii_digit()));
    memory
        || numbered("sxm")
        || numbered("hbm")
        || matches!(
            lower.as_str(),
            "pcie" | "nvl" | "nvlink" | "oam" | "hbm2e" | "hbm3e"
        )
}

/// A count written as a token: `8x` (before the name), `x8` (after it), `8gpu`, `8gpus`.
fn count_token(token: &str) -> Option<u32> {
    let digits = |text: &str| {
        (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse().ok())
            .flatten()
    };
    token
        .strip_suffix('x')
        .and_then(digits)
        .or_else(|| token.strip_prefix('x').and_then(digits))
        .or_else(|| token.strip_suffix("gpus").and_then(digits))
        .or_else(|| token.strip_suffix("gpu").and_then(digits))
}

/// Reads an accelerator string. `None` when it names no accelerator of [`ACCELERATORS`] or a TPU (the caller keeps
/// the string as written). A leading `<count>x` (`8xH100`, `4xNVIDIA_L40S`), a trailing `x<count>` or `<count>gpu`
/// give the count; other words (vendors such as `NVIDIA`, `AMD Instinct`) are passed over; the variant words after
/// the name are kept together; a known engine among the words is the runner's engine.
pub fn parse(written: &str) -> Option<Accelerator> {
    let lower = written.trim().to_ascii_lowercase();
    let mut tokens: Vec<String> = Vec::new();
    for token in lower
        .split(['-', '_', ' ', '/', ':'])
        .filter(|token| !token.is_empty())
    {
        // `8xh100` is a count and a name written together.
        let digits = token.bytes().take_while(u8::is_ascii_digit).count();
        match token[digits..].strip_prefix('x') {
            Some(rest) if digits > 0 && !rest.is_empty() => {
                tokens.push(format!("{}x", &token[..digits]));
                tokens.push(rest.to_string());
            }
            _ => tokens.push(token.to_string()),
        }
    }
    let mut found = Accelerator::default();
    let mut variant: Vec<&str> = Vec::new();
    let mut index = 0;
    while index < tokens.len() {
        let token = tokens[index].as_str();
        index += 1;
        if found.name.is_empty() {
            if token == "tpu"
                && let Some(name) = tokens.get(index).and_then(|next| token_name(next))
            {
                found.name = name;
                index += 1;
            } else if let Some(name) = token_name(token) {
                found.name = name;
            } else if let Some(count) = count_token(token) {
                found.count = Some(count);
            }
            continue;
        }
        if is_variant_token(token) && found.engine.is_none() {
            variant.push(token);
        } else if let Some(count) = count_token(token) {
            found.count = found.count.or(Some(count));
        } else if let Some(engine) = engine::canonical(token) {
            found.engine = found.engine.or(Some(engine));
        }
    }
    if found.name.is_empty() {
        return None;
    }
    found.variant = (!variant.is_empty()).then(|| variant.join("-"));
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(written: &str) -> (String, Option<u32>, Option<String>, Option<&'static str>) {
        let found = parse(written).unwrap_or_else(|| panic!("{written} names an accelerator"));
        (found.name, found.count, found.variant, found.engine)
    }

    #[test]
    fn strings_with_counts_vendors_variants_and_runners() {
        assert_eq!(read("4xNVIDIA_L40S"), ("l40s".into(), Some(4), None, None));
        assert_eq!(
            read("8xH100-SXM-80GB"),
            ("h100".into(), Some(8), Some("sxm-80gb".into()), None)
        );
        assert_eq!(read("8xB200"), ("b200".into(), Some(8), None, None));
        assert_eq!(read("8xMI300X"), ("mi300x".into(), Some(8), None, None));
        assert_eq!(read("72xGB200"), ("gb200".into(), Some(72), None, None));
        assert_eq!(
            read("b200-trt"),
            ("b200".into(), None, None, Some("trtllm"))
        );
        assert_eq!(
            read("h100-sglang"),
            ("h100".into(), None, None, Some("sglang"))
        );
        assert_eq!(
            read("NVIDIA-H100-80GB-HBM3"),
            ("h100".into(), None, Some("80gb-hbm3".into()), None)
        );
        assert_eq!(
            read("8xH100-SXM-80GB_TRT"),
            (
                "h100".into(),
                Some(8),
                Some("sxm-80gb".into()),
                Some("trtllm")
            )
        );
        assert_eq!(read("H100_x8"), ("h100".into(), Some(8), None, None));
        assert_eq!(read("tpu v5e"), ("tpu-v5e".into(), None, None, None));
        assert_eq!(
            read("AMD Instinct MI300X"),
            ("mi300x".into(), None, None, None)
        );
        assert_eq!(parse("cpu"), None);
        assert_eq!(parse("4xNVIDIA"), None);
    }

    #[test]
    fn tokens_name_accelerators_and_variants() {
        assert_eq!(token_name("L40S").as_deref(), Some("l40s"));
        assert_eq!(token_name("tpuv5e").as_deref(), Some("tpu-v5e"));
        assert_eq!(token_name("llama"), None);
        for variant in ["sxm", "SXM5", "pcie", "80gb", "hbm3", "hbm3e", "nvl"] {
            assert!(is_variant_token(variant), "{variant}");
        }
        for other in ["gb", "trt", "h100", "x8"] {
            assert!(!is_variant_token(other), "{other}");
        }
    }
}
