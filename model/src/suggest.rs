//! "Did you mean …": the closest known value to one that was not found, so a typo or a wrong case in a link,
//! a query or a command line is answered with the value meant rather than an empty result.

/// The choice `value` most likely meant: the one equal to it ignoring case, else the one within a small edit
/// distance (a third of the value's length, at least 1, at most 3), the closest first; `None` when nothing is
/// that close.
pub fn did_you_mean<'a>(
    value: &str,
    choices: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lowered = value.to_lowercase();
    let limit = (value.chars().count() / 3).clamp(1, 3);
    let mut best: Option<(usize, &str)> = None;
    for choice in choices {
        if choice == value {
            continue;
        }
        let distance = if choice.to_lowercase() == lowered {
            0
        } else {
            strsim::levenshtein(&lowered, &choice.to_lowercase())
        };
        if distance <= limit && best.is_none_or(|(closest, _)| distance < closest) {
            best = Some((distance, choice));
        }
    }
    best.map(|(_, choice)| choice)
}

/// ` (did you mean `vllm`?)` or nothing, to append to a message about an unknown value.
pub fn hint<'a>(value: &str, choices: impl IntoIterator<Item = &'a str>) -> String {
    did_you_mean(value, choices)
        .map_or_else(String::new, |choice| format!(" (did you mean `{choice}`?)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrong_case_or_a_typo_finds_the_value_and_a_stranger_finds_nothing() {
        let backends = ["sglang", "vllm", "pytorch_direct"];
        assert_eq!(did_you_mean("VLLM", backends), Some("vllm"));
        assert_eq!(did_you_mean("sglng", backends), Some("sglang"));
        assert_eq!(
            did_you_mean("pytorch-direct", backends),
            Some("pytorch_direct")
        );
        assert_eq!(did_you_mean("tgi", backends), None);
        assert_eq!(
            did_you_mean("vllm", backends),
            None,
            "an exact value needs no hint"
        );
        assert_eq!(hint("Sglang", backends), " (did you mean `sglang`?)");
        assert_eq!(hint("tgi", backends), "");
    }
}
