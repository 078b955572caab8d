//! The serving engines' names: one canonical name per engine, whatever spelling a file, a path or a runner name
//! uses (`trt`, `trt-llm`, `tensorrt_llm` are one engine, `trtllm`), so the same engine is one backend. The table
//! is [`ENGINES`]; docs/formats.md lists it for users.

/// One engine: its canonical name and every other spelling the tools and users write for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Engine {
    /// The canonical name, the backend a cell is keyed by.
    pub name: &'static str,
    /// Other spellings, in [`spelling`] form (lowercase, `_` and spaces as `-`).
    pub aliases: &'static [&'static str],
}

/// Every engine cellscope knows by name. A name found in no entry is kept as it is written.
pub static ENGINES: &[Engine] = &[
    Engine {
        name: "vllm",
        aliases: &["vllm-openai", "vllm-serve"],
    },
    Engine {
        name: "sglang",
        aliases: &["sgl", "sgl-lang"],
    },
    Engine {
        name: "trtllm",
        aliases: &[
            "trt",
            "trt-llm",
            "tensorrt-llm",
            "tensorrtllm",
            "tensorrt",
            "trtllm-serve",
        ],
    },
    Engine {
        name: "tgi",
        aliases: &["text-generation-inference", "hf-tgi"],
    },
    Engine {
        name: "llamacpp",
        aliases: &["llama.cpp", "llama-cpp", "llama-server"],
    },
    Engine {
        name: "ollama",
        aliases: &[],
    },
    Engine {
        name: "lmdeploy",
        aliases: &[],
    },
    Engine {
        name: "dynamo",
        aliases: &["ai-dynamo"],
    },
    Engine {
        name: "mlc",
        aliases: &["mlc-llm"],
    },
    Engine {
        name: "exllama",
        aliases: &["exllamav2"],
    },
    Engine {
        name: "deepspeed-mii",
        aliases: &["mii"],
    },
    Engine {
        name: "scalellm",
        aliases: &[],
    },
];

/// Lowercase and trimmed, `_` and spaces as `-`: where the spellings of one engine meet.
fn spelling(written: &str) -> String {
    written
        .trim()
        .chars()
        .map(|c| match c {
            '_' | ' ' => '-',
            other => other.to_ascii_lowercase(),
        })
        .collect()
}

/// The engine a name spells (its canonical name or an alias), if any.
pub fn known(written: &str) -> Option<&'static Engine> {
    let spelled = spelling(written);
    ENGINES
        .iter()
        .find(|engine| engine.name == spelled || engine.aliases.contains(&spelled.as_str()))
}

/// The canonical name of a known engine; `None` for a name the table does not know.
pub fn canonical(written: &str) -> Option<&'static str> {
    known(written).map(|engine| engine.name)
}

/// The backend a written engine name keys a cell by: the canonical name when the table knows it, else the name
/// as written (trimmed), so an engine the table lacks still reads as the file wrote it.
pub fn backend_name(written: &str) -> String {
    canonical(written).map_or_else(|| written.trim().to_string(), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_one_engine_is_one_name() {
        for written in [
            "trt",
            "trtllm",
            "trt-llm",
            "TRT-LLM",
            "tensorrt-llm",
            "tensorrt_llm",
            "TensorRT-LLM",
        ] {
            assert_eq!(canonical(written), Some("trtllm"), "{written}");
        }
        for written in ["sgl", "sglang", "SGLang"] {
            assert_eq!(canonical(written), Some("sglang"), "{written}");
        }
        assert_eq!(canonical("vLLM"), Some("vllm"));
        assert_eq!(canonical("llama.cpp"), Some("llamacpp"));
        assert_eq!(canonical("openai-chat"), None);
        assert_eq!(backend_name(" pytorch_direct "), "pytorch_direct");
        assert_eq!(backend_name("tensorrt_llm"), "trtllm");
    }

    #[test]
    fn no_alias_is_claimed_twice_or_is_another_engines_name() {
        let mut seen = std::collections::BTreeSet::new();
        for engine in ENGINES {
            assert!(seen.insert(engine.name), "{}", engine.name);
            for alias in engine.aliases {
                assert_eq!(spelling(alias), *alias, "{alias} is in spelling form");
                assert!(seen.insert(alias), "{alias}");
            }
        }
    }
}
