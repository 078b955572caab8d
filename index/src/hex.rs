//! Hexadecimal text of digests: file checksums in full, and the short ids of snapshots, mirrors and caches.

use sha2::Digest as _;

/// `bytes` as lowercase hexadecimal, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The first 8 bytes of `bytes` as 16 hexadecimal digits: ids and directory names, where 64 bits are plenty.
pub fn short_hex(bytes: &[u8]) -> String {
    hex(&bytes[..bytes.len().min(8)])
}

/// [`short_hex`] of the sha256 of `data`: a stable directory name for a URL or a path.
pub fn short_sha256(data: &[u8]) -> String {
    short_hex(&sha2::Sha256::digest(data))
}

#[cfg(test)]
mod tests {
    #[test]
    fn digests_print_as_lowercase_hex_and_short_ids_keep_eight_bytes() {
        assert_eq!(super::hex(&[0x00, 0xab, 0x7f]), "00ab7f");
        assert_eq!(super::short_hex(&[0xff; 32]), "ffffffffffffffff");
        // sha256("abc"), from FIPS 180-2's example.
        assert_eq!(super::short_sha256(b"abc"), "ba7816bf8f01cfea");
    }
}
