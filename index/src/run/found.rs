//! What discovery finds: the runs of every format (backups among them), each with its files, and what the formats
//! make of a directory's listing ([`Listed`]) and of a file offered to them ([`Offered`]).

use cellscope_model::api::Warning;

/// Files of one run of one format, found by discovery.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct DetectedRun {
    pub format: &'static str,
    /// The run root, relative to the data root.
    pub root: String,
    /// The run's files, relative to the data root, in path order.
    pub files: Vec<String>,
    /// The id the run's own files carry (its rows name their run), for a run a format found by its directory's
    /// listing: the run keeps it whatever `cellscope.toml` or another run says, and a second run of that id is
    /// left out.
    pub own_id: Option<String>,
    /// The run id when it is not the one the format's files give (another run already has that one: see
    /// `records::ids::separate_run_ids`).
    pub id: Option<String>,
    /// The names in the run's directory (sub-directories ending with `/`), sorted, for a run a format found by its
    /// directory's listing: the files its facts list.
    pub listing: Option<Vec<String>>,
    /// For a backup (a run as it was before a refill changed it, kept beside it): the run it is a backup of.
    pub backup_of: Option<BackupOf>,
}

impl DetectedRun {
    /// The run's files as its facts list them: its directory's names when a format found it by its listing, else
    /// its own files relative to its root.
    pub(crate) fn listed_files(&self) -> Vec<String> {
        if let Some(names) = &self.listing {
            return names.clone();
        }
        let prefix = if self.root.is_empty() {
            String::new()
        } else {
            format!("{}/", self.root)
        };
        self.files
            .iter()
            .map(|file| file.strip_prefix(&prefix).unwrap_or(file).to_string())
            .collect()
    }
}

/// What a backup is a backup of.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct BackupOf {
    /// The id of the run.
    pub run: String,
    /// The backup's label (why or when it was taken).
    pub label: String,
}

/// What a format makes of one directory from its listing alone (names and kinds; no file is opened).
#[derive(Clone, Debug, Default)]
pub(crate) struct Listed {
    /// The runs and backups the listing shows: the directory's files are theirs, and none is offered to the
    /// formats one by one.
    pub runs: Vec<DetectedRun>,
    /// Names in the directory the format deals with from the listing: never offered as results, nor named as
    /// results that are not regular files.
    pub names: Vec<&'static str>,
    /// The directory and everything under it belong to a run (its traces, notes and exports): a file there that no
    /// format reads is not named `not_recognised`.
    pub owns_subtree: bool,
    /// What the listing shows to be wrong, each naming its file.
    pub warnings: Vec<Warning>,
}

/// What the formats make of a file discovery offers them.
#[derive(Clone, Debug)]
pub(crate) enum Offered {
    /// A file of `format`, one of the files of the run rooted at `root`.
    Run { format: &'static str, root: String },
    /// A file no format reads.
    Unread(Unread),
}

/// A file no format reads: the runs it would be a side file of, and why it is not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unread {
    /// Each format that knows the file as one its tool writes beside a run's results, with that run's root: the
    /// file is then one of the run's when the run was found.
    pub side_of: Vec<(&'static str, String)>,
    /// Why no format reads it, in words, for the `not_recognised` finding.
    pub reason: String,
    /// The kind of warning the file gets when it is a result that cannot be read rather than an unknown file:
    /// `empty_file` (no content at all), `utf16_file`, `corrupt_file` (a Parquet file that is not whole),
    /// `unreadable_file` or `not_a_file`. `None` for a file no reader knows (`not_recognised`).
    pub problem: Option<&'static str>,
    /// A reader found some of its marks in the file (a text that resembles a tool's output): such a text is named
    /// even where other texts (notes, READMEs) are passed over.
    pub resembles_a_result: bool,
}
