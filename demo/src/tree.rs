//! Writing the output tree: a temporary sibling directory that replaces `out_dir` only once it is complete.

use crate::DemoError;
use std::fs;
use std::path::{Path, PathBuf};

/// Files written so far under a staging root, with counts for the [`crate::Summary`].
pub(crate) struct Tree {
    pub root: PathBuf,
    pub files: usize,
    pub bytes: u64,
}

/// How [`Tree::link_all`] placed the files.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Linked {
    pub linked: usize,
    pub copied: usize,
}

pub(crate) fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> DemoError + '_ {
    move |source| DemoError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl Tree {
    /// Creates a fresh staging directory beside `out_dir` (removing a stale one left by a crashed run).
    pub(crate) fn stage(out_dir: &Path) -> Result<Tree, DemoError> {
        let name = out_dir
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or("demo");
        let root = out_dir.with_file_name(format!(".{name}.partial-{}", std::process::id()));
        if root.exists() {
            fs::remove_dir_all(&root).map_err(io_error(&root))?;
        }
        if let Some(parent) = root
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
        {
            fs::create_dir_all(parent).map_err(io_error(parent))?;
        }
        fs::create_dir_all(&root).map_err(io_error(&root))?;
        Ok(Tree {
            root,
            files: 0,
            bytes: 0,
        })
    }

    pub(crate) fn write(&mut self, relative: &str, contents: &[u8]) -> Result<(), DemoError> {
        let path = self.root.join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(io_error(parent))?;
        }
        fs::write(&path, contents).map_err(io_error(&path))?;
        self.files += 1;
        self.bytes += contents.len() as u64;
        Ok(())
    }

    /// Hard-links every file under `source` to `relative` inside the tree, keeping the directory structure (copies a
    /// file when linking fails, for example across file systems). Linked files are not counted as written.
    pub(crate) fn link_all(&mut self, source: &Path, relative: &str) -> Result<Linked, DemoError> {
        let mut linked = Linked::default();
        let metadata = fs::symlink_metadata(source).map_err(io_error(source))?;
        let target = self.root.join(relative);
        if metadata.is_dir() {
            fs::create_dir_all(&target).map_err(io_error(&target))?;
            let mut entries: Vec<PathBuf> = fs::read_dir(source)
                .map_err(io_error(source))?
                .map(|entry| entry.map(|entry| entry.path()))
                .collect::<Result<_, _>>()
                .map_err(io_error(source))?;
            entries.sort();
            for entry in entries {
                let Some(name) = entry.file_name().and_then(|name| name.to_str()) else {
                    continue;
                };
                let part = self.link_all(&entry, &format!("{relative}/{name}"))?;
                linked.linked += part.linked;
                linked.copied += part.copied;
            }
        } else if metadata.is_file() {
            if let Some(parent) = target.parent() {
                fs::create_dir_all(parent).map_err(io_error(parent))?;
            }
            if fs::hard_link(source, &target).is_ok() {
                linked.linked += 1;
            } else {
                fs::copy(source, &target).map_err(io_error(&target))?;
                linked.copied += 1;
            }
        }
        // Anything else (a symlink, a socket) is not part of a generated demo root and is left out.
        Ok(linked)
    }

    /// Moves the finished tree into place. An existing `out_dir` is first renamed aside and removed afterwards,
    /// so at every instant `out_dir` is either the old complete tree or the new complete tree.
    pub(crate) fn commit(self, out_dir: &Path) -> Result<(), DemoError> {
        let old = out_dir.with_file_name(format!(
            ".{}.old-{}",
            out_dir
                .file_name()
                .and_then(|name| name.to_str())
                .unwrap_or("demo"),
            std::process::id()
        ));
        let had_old = out_dir.exists();
        if had_old {
            fs::rename(out_dir, &old).map_err(io_error(out_dir))?;
        }
        fs::rename(&self.root, out_dir).map_err(io_error(out_dir))?;
        if had_old {
            fs::remove_dir_all(&old).map_err(io_error(&old))?;
        }
        Ok(())
    }
}
