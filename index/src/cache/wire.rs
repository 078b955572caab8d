//! How the read results that are not plain data go into a cache entry: names the code keeps as `&'static str`
//! (a format, a rejection kind) are written as text and read back only when the running code knows them, JSON
//! values as their text, and row offsets as differences (they grow through a file, so the differences are small
//! numbers, which the entry's variable-length integers keep to a byte or two).

/// `Option<serde_json::Value>` as its JSON text: a compact binary format cannot hold a self-describing value.
/// serde_json's `float_roundtrip` (a workspace feature) makes the text give back the same numbers.
pub mod json_text {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(
        value: &Option<serde_json::Value>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        value
            .as_ref()
            .map(serde_json::Value::to_string)
            .serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<serde_json::Value>, D::Error> {
        Option::<String>::deserialize(deserializer)?
            .map(|text| serde_json::from_str(&text).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// A format's name, read back as the name of a format this build has.
pub mod format_name {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(name: &&'static str, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(name)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<&'static str, D::Error> {
        let name = String::deserialize(deserializer)?;
        crate::formats::by_name(&name)
            .map(|format| format.name())
            .ok_or_else(|| serde::de::Error::custom(format!("unknown format {name}")))
    }
}

/// A [`FileRejected`](crate::formats::tr164::metrics_csv::FileRejected) kind, read back as one the parser gives.
pub mod rejection_kind {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(kind: &&'static str, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(kind)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<&'static str, D::Error> {
        let kind = String::deserialize(deserializer)?;
        crate::formats::tr164::metrics_csv::REJECTION_KINDS
            .iter()
            .copied()
            .find(|known| *known == kind)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown rejection kind {kind}")))
    }
}

/// Offsets in file order as the difference to the one before (wrapping, so any sequence comes back exactly).
pub mod increasing {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(offsets: &[u64], serializer: S) -> Result<S::Ok, S::Error> {
        let mut previous = 0u64;
        serializer.collect_seq(offsets.iter().map(|offset| {
            let difference = offset.wrapping_sub(previous);
            previous = *offset;
            difference
        }))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u64>, D::Error> {
        let mut offsets = Vec::<u64>::deserialize(deserializer)?;
        let mut previous = 0u64;
        for offset in &mut offsets {
            previous = previous.wrapping_add(*offset);
            *offset = previous;
        }
        Ok(offsets)
    }
}
