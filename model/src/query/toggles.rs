//! The what-if toggles (`include`, `omit`, and the older spelling `lineage`): which cells enter aggregates and
//! which rows refilled cells show.

use serde::{Deserialize, Serialize};

/// One what-if toggle, by name (for controls, labels and the `include` parameter).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Include {
    /// Cells an exclusion ledger takes out.
    Excluded,
    /// Partial cells (in by default).
    Partial,
    /// Replace refilled cells by their pre-refill state from the backup.
    PreRefill,
}

impl Include {
    /// Every toggle, in the order controls list them.
    pub const ALL: [Include; 3] = [Include::Excluded, Include::Partial, Include::PreRefill];

    /// Words `include` takes that change nothing: refilled cells are current data and always in (`current` is
    /// how `lineage` said it).
    pub const ALWAYS_IN: [&'static str; 2] = ["refilled", "current"];

    /// The name `include` takes.
    pub fn name(self) -> &'static str {
        match self {
            Include::Excluded => "excluded",
            Include::Partial => "partial",
            Include::PreRefill => "pre_refill",
        }
    }

    /// The control's label.
    pub fn label(self) -> &'static str {
        match self {
            Include::Excluded => "include excluded cells",
            Include::Partial => "include partial cells",
            Include::PreRefill => "use pre-refill rows",
        }
    }

    /// The toggle a name names.
    pub fn parse(text: &str) -> Option<Include> {
        Include::ALL
            .into_iter()
            .find(|include| include.name() == text)
    }
}

/// The what-if toggles. Refilled cells are current data and always in; `pre_refill` swaps in the rows a refill
/// replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WhatIf {
    /// Cells the exclusion ledger takes out are put back.
    pub excluded: bool,
    /// Partial cells enter aggregates (the default).
    pub partial: bool,
    /// Refilled cells show their state before the refill.
    pub pre_refill: bool,
}

impl WhatIf {
    /// What a first visit, the API and the CLI use unless told otherwise.
    pub const DEFAULT: WhatIf = WhatIf {
        excluded: false,
        partial: true,
        pre_refill: false,
    };

    /// Whether a toggle is on.
    pub fn get(&self, include: Include) -> bool {
        match include {
            Include::Excluded => self.excluded,
            Include::Partial => self.partial,
            Include::PreRefill => self.pre_refill,
        }
    }

    /// Turns a toggle on or off.
    pub fn set(&mut self, include: Include, on: bool) {
        match include {
            Include::Excluded => self.excluded = on,
            Include::Partial => self.partial = on,
            Include::PreRefill => self.pre_refill = on,
        }
    }

    /// The toggles that differ from the defaults, as the header says them.
    pub fn active(&self) -> Vec<&'static str> {
        let mut active = Vec::new();
        if self.excluded {
            active.push("excluded cells included");
        }
        if !self.partial {
            active.push("partial cells left out");
        }
        if self.pre_refill {
            active.push("pre-refill rows");
        }
        active
    }

    /// The `include` items that differ from the defaults and whether `omit=partial` is due: what a link writes.
    pub(crate) fn written(&self) -> (Vec<&'static str>, bool) {
        let included = [Include::Excluded, Include::PreRefill]
            .into_iter()
            .filter(|include| self.get(*include))
            .map(Include::name)
            .collect();
        (included, !self.partial)
    }
}

impl Default for WhatIf {
    fn default() -> Self {
        WhatIf::DEFAULT
    }
}
