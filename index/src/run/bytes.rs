//! A file's bytes as every reader takes them: its digest, decompressed when it is stored compressed, without the
//! byte-order marks it starts with.

use cellscope_model::api::FileDigest;

/// The digest of a file of `bytes` at `relative`: its size, and its md5 and sha256 when `hashes` asks for them.
pub(crate) fn digest(relative: String, bytes: &[u8], hashes: bool) -> FileDigest {
    use md5::Digest as _;
    let (md5, sha256) = if hashes {
        let md5 = md5::Md5::digest(bytes);
        let sha256 = sha2::Sha256::digest(bytes);
        (Some(crate::hex::hex(&md5)), Some(crate::hex::hex(&sha256)))
    } else {
        (None, None)
    };
    FileDigest {
        path: relative,
        bytes: bytes.len() as u64,
        md5,
        sha256,
    }
}

/// [`digest`] of a file read a piece at a time, for a file that is not parsed (so never held whole); `None` when
/// it cannot be read to its end.
pub(crate) fn streamed_digest(
    storage: &dyn crate::storage::Storage,
    relative: &str,
    size: u64,
    hashes: bool,
) -> Option<FileDigest> {
    use md5::Digest as _;
    const PIECE_BYTES: u64 = 1 << 20;
    let mut md5 = md5::Md5::new();
    let mut sha256 = sha2::Sha256::new();
    let mut read = 0;
    while hashes && read < size {
        let piece = storage
            .read_range(relative, read..(read + PIECE_BYTES).min(size))
            .ok()
            .filter(|piece| !piece.is_empty())?;
        md5.update(&piece);
        sha256.update(&piece);
        read += piece.len() as u64;
    }
    Some(FileDigest {
        path: relative.to_string(),
        bytes: size,
        md5: hashes.then(|| crate::hex::hex(&md5.finalize())),
        sha256: hashes.then(|| crate::hex::hex(&sha256.finalize())),
    })
}

/// Whether a metrics file of this name is stored compressed (and read through [`decompressed`]).
pub(crate) fn is_compressed(name: &str) -> bool {
    name.ends_with(".gz") || name.ends_with(".zst")
}

/// The bytes of a metrics file named `name` as the index parses them: `None` when it is stored plain, the
/// decompressed bytes for `.gz` (gzip) and `.zst` (zstd).
pub(crate) fn decompressed(name: &str, stored: &[u8]) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read as _;
    let mut out = Vec::new();
    if name.ends_with(".gz") {
        flate2::read::MultiGzDecoder::new(stored).read_to_end(&mut out)?;
    } else if name.ends_with(".zst") {
        zstd::stream::read::Decoder::new(stored)?.read_to_end(&mut out)?;
    } else {
        return Ok(None);
    }
    Ok(Some(out))
}

/// `bytes` without the UTF-8 byte-order marks they start with. Every one is taken: the csv crate takes one more
/// than a single strip would, so the two splitters would otherwise read a file with two marks differently (found
/// by fuzzing). Row offsets count from after them.
pub(crate) fn without_boms(mut bytes: &[u8]) -> &[u8] {
    while let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        bytes = rest;
    }
    bytes
}
