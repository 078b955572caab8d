//! Every fixture directory is described: a row naming `` `<dir>/` `` in its parent's README.md.

use super::Problem;
use std::path::Path;

/// The fixture folders whose sub-directories each need a row in the folder's README.md.
pub(super) const DESCRIBED: [&str; 2] = ["data/fixtures", "data/fixtures/formats"];

/// A problem per fixture directory that its README.md does not name.
pub(super) fn check(root: &Path) -> anyhow::Result<Vec<Problem>> {
    let mut problems = Vec::new();
    for folder in DESCRIBED {
        let readme = format!("{folder}/README.md");
        let text = std::fs::read_to_string(root.join(&readme)).unwrap_or_default();
        let mut names: Vec<String> = std::fs::read_dir(root.join(folder))?
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            if !names_directory(&text, &name) {
                problems.push(Problem {
                    file: readme.clone(),
                    line: 1,
                    message: format!(
                        "fixture directory `{folder}/{name}/` has no row here: add `| `{name}/` | what it covers | …`"
                    ),
                });
            }
        }
    }
    Ok(problems)
}

/// Whether the first cell of a table row of `readme` names the directory in code (a row may name several).
fn names_directory(readme: &str, name: &str) -> bool {
    let code = format!("`{name}/`");
    readme.lines().any(|line| {
        line.trim_start()
            .strip_prefix('|')
            .and_then(|row| row.split('|').next())
            .is_some_and(|first_cell| first_cell.contains(&code))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_must_start_with_the_directory_in_code() {
        let readme = "| directory | covers |\n|---|---|\n| `good/` | a clean run |\n| `a/`, `b/` | two |\n\
                      see `bad/` too\n| `c/` | like `bad/` |\n";
        assert!(names_directory(readme, "good"));
        assert!(names_directory(readme, "b"));
        assert!(!names_directory(readme, "bad"));
        assert!(!names_directory(readme, "goo"));
    }
}
