//! Sends the large bodies every client fetches (the cells table, compressed once per snapshot) from sealed memory
//! files with `sendfile`, so the kernel hands their pages to the socket instead of copying each answer's bytes.
//!
//! Under load, most of `/api/cells`' time is the kernel copying the same 100 KB (the demo) to 3 MB (at scale)
//! into socket buffers for every answer; the server's own code is about a tenth. A body made with [`sealed`]
//! keeps its bytes in memory as before (every other path, tests and encodings read them as ordinary [`Bytes`]) and
//! a copy in a memory file (`memfd`) sealed against writes. When a connection's writer, [`ZeroCopyStream`], is
//! handed a slice that lies inside such a body, it sends that slice from the sealed file with `sendfile`: the
//! socket takes references to the file's pages, and only the client's read copies them. Headers before the body
//! are sent with `MSG_MORE`, so they leave in the same segment as the body's first bytes.
//!
//! Sealing is what makes this safe: pages queued in a socket are read when the client reads them, possibly after
//! the body was dropped, and a sealed file can no longer change. Anything that fails (no `memfd` on this system,
//! too few file descriptors) leaves the body an ordinary one, written by copying as before. Elsewhere than Linux
//! [`sealed`] returns ordinary bytes.

use bytes::Bytes;

/// Bodies smaller than this are ordinary bytes: copying them costs less than a second system call per answer.
pub const MIN_SEALED_BYTES: usize = 32 * 1024;

/// `body` as [`Bytes`] that [`ZeroCopyStream`] sends without copying, or as ordinary bytes where that is not
/// possible (small bodies, systems without sealed memory files, or any error making the file).
pub fn sealed(body: Vec<u8>) -> Bytes {
    if body.len() < MIN_SEALED_BYTES {
        return Bytes::from(body);
    }
    #[cfg(target_os = "linux")]
    {
        linux::sealed(body)
    }
    #[cfg(not(target_os = "linux"))]
    {
        Bytes::from(body)
    }
}

#[cfg(target_os = "linux")]
pub use linux::ZeroCopyStream;

/// How many body bytes were sent without copying since the process started (0 elsewhere than Linux): what the
/// tests check the path was taken with.
pub fn bytes_sent_without_copying() -> u64 {
    #[cfg(target_os = "linux")]
    {
        linux::SENT_BYTES.load(std::sync::atomic::Ordering::Relaxed)
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

/// Elsewhere than Linux a connection is written as it is.
#[cfg(not(target_os = "linux"))]
pub type ZeroCopyStream = tokio::net::TcpStream;

/// Wraps an accepted connection in its writer.
pub fn stream(stream: tokio::net::TcpStream) -> ZeroCopyStream {
    #[cfg(target_os = "linux")]
    {
        linux::ZeroCopyStream(stream)
    }
    #[cfg(not(target_os = "linux"))]
    {
        stream
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use bytes::Bytes;
    use rustix::fd::OwnedFd;
    use std::io::{self, IoSlice, Write as _};
    use std::pin::Pin;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, RwLock};
    use std::task::{Context, Poll, ready};
    use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

    /// A live sealed body: where its bytes are in memory and the file holding the same bytes.
    struct Region {
        start: usize,
        len: usize,
        file: Arc<OwnedFd>,
    }

    /// Every live sealed body. A few per snapshot, so a scan is cheaper than any index.
    static REGIONS: RwLock<Vec<Region>> = RwLock::new(Vec::new());

    /// See [`super::bytes_sent_without_copying`].
    pub(super) static SENT_BYTES: AtomicU64 = AtomicU64::new(0);

    /// The owner of a sealed body's bytes: registered while it lives.
    struct Sealed {
        bytes: Vec<u8>,
    }

    impl AsRef<[u8]> for Sealed {
        fn as_ref(&self) -> &[u8] {
            &self.bytes
        }
    }

    impl Drop for Sealed {
        fn drop(&mut self) {
            let start = self.bytes.as_ptr() as usize;
            let mut regions = REGIONS
                .write()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            regions.retain(|region| region.start != start);
        }
    }

    pub(super) fn sealed(body: Vec<u8>) -> Bytes {
        match seal_copy(&body) {
            Ok(file) => {
                let region = Region {
                    start: body.as_ptr() as usize,
                    len: body.len(),
                    file: Arc::new(file),
                };
                // Registered before the bytes are handed out, and unregistered only when the last reference to
                // them is dropped, when no writer can hold a slice of them any more.
                REGIONS
                    .write()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .push(region);
                Bytes::from_owner(Sealed { bytes: body })
            }
            Err(error) => {
                tracing::debug!(%error, "cannot make a sealed memory file; the body is copied per answer");
                Bytes::from(body)
            }
        }
    }

    /// A sealed memory file holding `body`.
    fn seal_copy(body: &[u8]) -> io::Result<OwnedFd> {
        use rustix::fs::{MemfdFlags, SealFlags};
        let fd = rustix::fs::memfd_create(
            "cellscope-body",
            MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
        )?;
        let mut file = std::fs::File::from(fd);
        file.write_all(body)?;
        let fd = OwnedFd::from(file);
        rustix::fs::fcntl_add_seals(
            &fd,
            SealFlags::WRITE | SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL,
        )?;
        Ok(fd)
    }

    /// The first of `slices` that lies inside a live sealed body (empty ones never do): its position among them,
    /// the sealed file and the offset in it. The registry is read once per write, whatever the number of slices.
    pub(super) fn first_sealed(slices: &[IoSlice<'_>]) -> Option<(usize, Arc<OwnedFd>, u64)> {
        let regions = REGIONS
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        slices.iter().enumerate().find_map(|(at, slice)| {
            let start = slice.as_ptr() as usize;
            let region = regions.iter().find(|region| {
                !slice.is_empty()
                    && start >= region.start
                    && start + slice.len() <= region.start + region.len
            })?;
            Some((at, region.file.clone(), (start - region.start) as u64))
        })
    }

    /// A TCP connection that sends slices of sealed bodies with `sendfile` (see the module's documentation).
    pub struct ZeroCopyStream(pub tokio::net::TcpStream);

    impl ZeroCopyStream {
        /// Runs `write` when the socket is writable, until it does not report that it would block.
        fn poll_write_with(
            &self,
            cx: &mut Context<'_>,
            mut write: impl FnMut() -> io::Result<usize>,
        ) -> Poll<io::Result<usize>> {
            loop {
                ready!(self.0.poll_write_ready(cx))?;
                match self.0.try_io(Interest::WRITABLE, &mut write) {
                    Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
                    result => return Poll::Ready(result),
                }
            }
        }
    }

    impl AsyncRead for ZeroCopyStream {
        fn poll_read(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
        }
    }

    impl AsyncWrite for ZeroCopyStream {
        fn poll_write(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.poll_write_vectored(cx, &[IoSlice::new(buf)])
        }

        fn poll_write_vectored(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            bufs: &[IoSlice<'_>],
        ) -> Poll<io::Result<usize>> {
            let this = self.get_mut();
            let Some((at, file, offset)) = first_sealed(bufs) else {
                return Pin::new(&mut this.0).poll_write_vectored(cx, bufs);
            };
            if at > 0 {
                // What comes before the body (the headers) waits in the socket for the body's first bytes.
                // Returning a short write is allowed: the caller writes the rest, the body, next.
                use rustix::net::{SendAncillaryBuffer, SendFlags};
                let before = &bufs[..at];
                return this.poll_write_with(cx, || {
                    rustix::net::sendmsg(
                        &this.0,
                        before,
                        &mut SendAncillaryBuffer::default(),
                        SendFlags::MORE | SendFlags::NOSIGNAL | SendFlags::DONTWAIT,
                    )
                    .map_err(io::Error::from)
                });
            }
            let len = bufs[0].len();
            this.poll_write_with(cx, || {
                let mut from = offset;
                let sent = rustix::fs::sendfile(&this.0, &*file, Some(&mut from), len)?;
                SENT_BYTES.fetch_add(sent as u64, Ordering::Relaxed);
                Ok(sent)
            })
        }

        fn is_write_vectored(&self) -> bool {
            true
        }

        fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.get_mut().0).poll_flush(cx)
        }

        fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_body_reads_back_from_its_file_cannot_change_and_is_forgotten_with_its_last_reference()
     {
        let body: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let bytes = sealed(body.clone());
        assert_eq!(&bytes[..], &body[..]);
        let (_, file, offset) = linux::first_sealed(&[std::io::IoSlice::new(&bytes[1000..3000])])
            .expect("a sealed body is registered");
        assert_eq!(offset, 1000);
        // Among several slices (a response head, an empty one, then the body), the body's is found.
        let head = b"HTTP/1.1 200 OK\r\n\r\n";
        let slices = [
            std::io::IoSlice::new(head),
            std::io::IoSlice::new(&[]),
            std::io::IoSlice::new(&bytes[5..]),
        ];
        assert_eq!(
            linux::first_sealed(&slices).map(|(at, _, offset)| (at, offset)),
            Some((2, 5))
        );
        let mut read = vec![0; 2000];
        assert_eq!(rustix::io::pread(&*file, &mut read, offset).unwrap(), 2000);
        assert_eq!(read, &body[1000..3000]);
        assert!(
            rustix::io::pwrite(&*file, b"x", 0).is_err(),
            "the file is sealed against writes"
        );
        let registered = std::sync::Arc::downgrade(&file);
        drop(file);
        let clone = bytes.slice(10..20);
        drop(bytes);
        assert!(
            registered.upgrade().is_some(),
            "still registered while a slice of the body lives"
        );
        drop(clone);
        assert!(
            registered.upgrade().is_none(),
            "forgotten (its file closed) with the last reference"
        );
    }

    #[test]
    fn small_bodies_and_ordinary_bytes_are_not_sealed() {
        let small = sealed(vec![7; MIN_SEALED_BYTES - 1]);
        assert!(linux::first_sealed(&[std::io::IoSlice::new(&small)]).is_none());
        let ordinary = Bytes::from(vec![7u8; 2 * MIN_SEALED_BYTES]);
        assert!(linux::first_sealed(&[std::io::IoSlice::new(&ordinary)]).is_none());
    }
}
