//! The content encodings of bodies: compressing a body once per snapshot in each, and choosing the best one a
//! client accepts.

use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::http::header::ACCEPT_ENCODING;

/// The content encodings bodies are compressed in, best first.
pub const ENCODINGS: [&str; 3] = ["zstd", "br", "gzip"];

/// zstd's level for bodies kept per snapshot: their size matters more than the few milliseconds.
const ZSTD_LEVEL: i32 = 6;

/// zstd's level for the cells table of a complete snapshot, which every client fetches and which is compressed
/// once, in the background: level 19 where it takes well under a second (the demo's 449 KB table: 125 KB in about
/// 70 ms, against 141 KB at level 6; fewer bytes per answer is what lowers `/api/cells`' latency under load,
/// most of which is the loopback's copying), level 6 for larger tables (19 takes about 0.15 s a megabyte).
pub(crate) fn complete_zstd_level(table_bytes: usize) -> i32 {
    if table_bytes <= 4 << 20 {
        19
    } else {
        ZSTD_LEVEL
    }
}

/// `body` compressed in `encoding` (one of [`ENCODINGS`]); `None` if the encoder fails.
fn compress(body: &[u8], encoding: &str) -> Option<Vec<u8>> {
    use std::io::Write as _;
    match encoding {
        "zstd" => zstd::bulk::compress(body, ZSTD_LEVEL).ok(),
        "br" => {
            let mut brotli = Vec::new();
            let mut writer = brotli::CompressorWriter::new(&mut brotli, 4096, 6, 22);
            let written = writer.write_all(body).is_ok() && writer.flush().is_ok();
            drop(writer);
            written.then_some(brotli)
        }
        "gzip" => {
            let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
            gzip.write_all(body).ok()?;
            gzip.finish().ok()
        }
        _ => None,
    }
}

/// zstd, brotli and gzip versions of `body`. Compressing 0.4 MB per request would dominate the cost of
/// `/api/cells`; once per snapshot it is a few milliseconds.
pub fn compress_all(body: &[u8]) -> Vec<(&'static str, Bytes)> {
    ENCODINGS
        .into_iter()
        .filter_map(|encoding| Some((encoding, Bytes::from(compress(body, encoding)?))))
        .collect()
}

/// The unfiltered cells table of a snapshot, compressed once per snapshot and encoding. zstd (what browsers,
/// curl `--compressed` and Python clients take first) is made with the snapshot; brotli and gzip, five to ten
/// times slower to make, the first time a client that takes no zstd asks, so that a (warm) start does not wait
/// for encodings few clients use. Each is sealed ([`super::zero_copy::sealed`]), so answers send it without
/// copying.
pub struct Compressed {
    plain: Bytes,
    zstd: Option<Bytes>,
    later: [(&'static str, std::sync::OnceLock<Option<Bytes>>); 2],
}

impl Compressed {
    /// `plain` with its zstd version at `zstd_level` made now.
    pub fn new(plain: Bytes, zstd_level: i32) -> Compressed {
        Compressed {
            zstd: zstd::bulk::compress(&plain, zstd_level)
                .ok()
                .map(super::zero_copy::sealed),
            plain,
            later: [
                ("br", std::sync::OnceLock::new()),
                ("gzip", std::sync::OnceLock::new()),
            ],
        }
    }

    /// The body in `encoding`, compressed now if it is the first time it is asked for.
    pub fn get(&self, encoding: &str) -> Option<Bytes> {
        if encoding == "zstd" {
            return self.zstd.clone();
        }
        let (_, slot) = self.later.iter().find(|(name, _)| *name == encoding)?;
        slot.get_or_init(|| compress(&self.plain, encoding).map(super::zero_copy::sealed))
            .clone()
    }
}

/// The best of the bodies' encodings ([`ENCODINGS`], best first) the client
/// accepts.
pub(crate) fn accepted_encoding(headers: &HeaderMap) -> Option<&'static str> {
    let accepted = headers
        .get(ACCEPT_ENCODING)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    let accepts = |encoding: &str| {
        accepted.split(',').any(|part| {
            let mut pieces = part.trim().split(';');
            pieces.next() == Some(encoding)
                && !pieces.any(|parameter| parameter.trim().replace(' ', "") == "q=0")
        })
    };
    ENCODINGS.into_iter().find(|encoding| accepts(encoding))
}
