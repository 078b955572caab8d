//! Writing the output tree: a temporary sibling directory that replaces `out_dir` only once it is complete.

use crate::DemoError;
use std::fs;
use std::path::{Path, PathBuf};

/// Files written so far under a staging root, with counts for the [`crate::Summary`].
pub struct Tree {
    pub root: PathBuf,
    pub files: usize,
    pub bytes: u64,
}

pub fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> DemoError + '_ {
    move |source| DemoError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl Tree {
    /// Creates a fresh staging directory beside `out_dir` (removing a stale one left by a crashed run).
    pub fn stage(out_dir: &Path) -> Result<Tree, DemoError> {
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

    pub fn write(&mut self, relative: &str, contents: &[u8]) -> Result<(), DemoError> {
        let path = self.root.join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(io_error(parent))?;
        }
        fs::write(&path, contents).map_err(io_error(&path))?;
        self.files += 1;
        self.bytes += contents.len() as u64;
        Ok(())
    }

    /// Moves the finished tree into place. An existing `out_dir` is first renamed aside and removed afterwards,
    /// so at every instant `out_dir` is either the old complete tree or the new complete tree.
    pub fn commit(self, out_dir: &Path) -> Result<(), DemoError> {
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
