//! No import cycle between the modules of a crate: the module floors of ARCHITECTURE.md, checked.
//!
//! Each crate root (`lib.rs`, `main.rs`) is parsed with `syn`, following `mod name;` declarations to their files;
//! `#[cfg(test)]` modules are left out. A module depends on another when it names it through `crate::…`,
//! `super::…` or `self::…` (in a `use` or in any path), resolved to the deepest module the path names. A module
//! naming its own descendants is how a parent assembles its children, so those edges are not counted; everything
//! else, a child reaching up to its parent included, is. Every strongly connected component of more than one
//! module is a problem, reported with each member's edges inside it.

use super::Problem;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// The crate roots checked, relative to the workspace root.
pub(super) const CRATE_ROOTS: [&str; 10] = [
    "model/src/lib.rs",
    "index/src/lib.rs",
    "server/src/lib.rs",
    "server/src/main.rs",
    "draw/src/lib.rs",
    "app/src/main.rs",
    "demo/src/lib.rs",
    "demo/src/main.rs",
    "tests/src/lib.rs",
    "xtask/src/main.rs",
];

/// A module's path from its crate root (`[]` is the root).
type ModulePath = Vec<String>;

/// One crate's modules: where each is written and the modules it names.
#[derive(Default)]
struct Graph {
    file_of: BTreeMap<ModulePath, PathBuf>,
    edges: BTreeMap<ModulePath, BTreeSet<ModulePath>>,
}

/// The cycles of every crate root that exists under `root`.
pub(super) fn check(root: &Path) -> anyhow::Result<Vec<Problem>> {
    let mut problems = Vec::new();
    for crate_root in CRATE_ROOTS {
        let path = root.join(crate_root);
        if path.is_file() {
            problems.extend(cycles_of(root, &path)?);
        }
    }
    Ok(problems)
}

/// The cycles among the modules reached from one crate root.
fn cycles_of(root: &Path, crate_root: &Path) -> anyhow::Result<Vec<Problem>> {
    let mut graph = Graph::default();
    let mut items = BTreeMap::new();
    load(crate_root, Vec::new(), &mut graph, &mut items)?;
    let known: BTreeSet<ModulePath> = graph.file_of.keys().cloned().collect();
    for (module, module_items) in &items {
        let mut names = Names::default();
        for item in module_items {
            names.visit_item(item);
        }
        let targets = names
            .paths
            .iter()
            .filter_map(|path| resolve(module, path, &known))
            .filter(|target| target != module && !target.starts_with(module))
            .collect();
        graph.edges.insert(module.clone(), targets);
    }
    Ok(strongly_connected(&graph.edges)
        .into_iter()
        .map(|component| problem(root, &graph, &component))
        .collect())
}

/// Reads a module file, records it, and follows its `mod name;` declarations (inline modules stay part of the
/// file's module, test modules are dropped).
fn load(
    file: &Path,
    module: ModulePath,
    graph: &mut Graph,
    items: &mut BTreeMap<ModulePath, Vec<syn::Item>>,
) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(file)
        .map_err(|error| anyhow::anyhow!("cannot read {}: {error}", file.display()))?;
    let parsed = syn::parse_file(&text)
        .map_err(|error| anyhow::anyhow!("cannot parse {}: {error}", file.display()))?;
    graph.file_of.insert(module.clone(), file.to_path_buf());
    let directory = child_directory(file, module.is_empty());
    let mut kept = Vec::new();
    for item in parsed.items {
        if is_test_only(&item) {
            continue;
        }
        if let syn::Item::Mod(declared) = &item
            && declared.content.is_none()
        {
            let name = declared.ident.to_string();
            let mut child = module.clone();
            child.push(name.clone());
            load(&directory.join(format!("{name}.rs")), child, graph, items)?;
            continue;
        }
        kept.push(item);
    }
    items.insert(module, kept);
    Ok(())
}

/// Where the files of a module's children are: beside a crate root, in `foo/` for `foo.rs`.
fn child_directory(file: &Path, is_crate_root: bool) -> PathBuf {
    let parent = file.parent().unwrap_or(Path::new(""));
    if is_crate_root {
        return parent.to_path_buf();
    }
    let stem = file.file_stem().unwrap_or_default();
    parent.join(stem)
}

/// An item under `#[cfg(test)]`.
fn is_test_only(item: &syn::Item) -> bool {
    let attributes = match item {
        syn::Item::Mod(item) => &item.attrs,
        syn::Item::Fn(item) => &item.attrs,
        syn::Item::Use(item) => &item.attrs,
        syn::Item::Impl(item) => &item.attrs,
        _ => return false,
    };
    attributes.iter().any(|attribute| {
        attribute.path().is_ident("cfg")
            && attribute
                .parse_args::<syn::Meta>()
                .is_ok_and(|meta| meta.path().is_ident("test"))
    })
}

/// Every path of a module that starts at `crate`, `super` or `self`, as its segments.
#[derive(Default)]
struct Names {
    paths: Vec<Vec<String>>,
}

impl<'ast> Visit<'ast> for Names {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let mut prefix = Vec::new();
        use_paths(&item.tree, &mut prefix, &mut self.paths);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path
            .segments
            .iter()
            .map(|segment| segment.ident.to_string())
            .collect();
        if matches!(
            segments.first().map(String::as_str),
            Some("crate" | "super" | "self")
        ) {
            self.paths.push(segments);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if !is_test_only(&syn::Item::Mod(item.clone())) {
            syn::visit::visit_item_mod(self, item);
        }
    }
}

/// The paths a `use` tree imports.
fn use_paths(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(path) => {
            prefix.push(path.ident.to_string());
            use_paths(&path.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(name) => out.push(with(prefix, &name.ident)),
        syn::UseTree::Rename(rename) => out.push(with(prefix, &rename.ident)),
        syn::UseTree::Glob(_) => out.push(prefix.clone()),
        syn::UseTree::Group(group) => {
            for tree in &group.items {
                use_paths(tree, prefix, out);
            }
        }
    }
}

fn with(prefix: &[String], ident: &syn::Ident) -> Vec<String> {
    let mut path = prefix.to_vec();
    path.push(ident.to_string());
    path
}

/// The deepest known module a path from `module` names, if it starts at `crate`, `super` or `self`.
fn resolve(
    module: &ModulePath,
    path: &[String],
    known: &BTreeSet<ModulePath>,
) -> Option<ModulePath> {
    let mut base: ModulePath = match path.first()?.as_str() {
        "crate" => Vec::new(),
        "super" | "self" => module.clone(),
        _ => return None,
    };
    let mut rest = &path[usize::from(path[0] == "crate")..];
    while let Some(first) = rest.first() {
        match first.as_str() {
            "super" => {
                base.pop();
            }
            "self" => {}
            _ => break,
        }
        rest = &rest[1..];
    }
    let mut target = base.clone();
    for segment in rest {
        target.push(segment.clone());
        if !known.contains(&target) {
            target.pop();
            break;
        }
    }
    Some(target)
}

/// Tarjan's strongly connected components with more than one member.
fn strongly_connected(edges: &BTreeMap<ModulePath, BTreeSet<ModulePath>>) -> Vec<Vec<ModulePath>> {
    struct State<'a> {
        edges: &'a BTreeMap<ModulePath, BTreeSet<ModulePath>>,
        order: BTreeMap<&'a ModulePath, (usize, usize)>,
        stack: Vec<&'a ModulePath>,
        on_stack: BTreeSet<&'a ModulePath>,
        components: Vec<Vec<ModulePath>>,
    }
    fn visit<'a>(state: &mut State<'a>, node: &'a ModulePath) {
        let number = state.order.len();
        state.order.insert(node, (number, number));
        state.stack.push(node);
        state.on_stack.insert(node);
        let edges = state.edges;
        for next in edges.get(node).into_iter().flatten() {
            let Some((next, _)) = edges.get_key_value(next) else {
                continue;
            };
            if !state.order.contains_key(next) {
                visit(state, next);
                let low = state.order[next].1;
                lower(state, node, low);
            } else if state.on_stack.contains(next) {
                let low = state.order[next].0;
                lower(state, node, low);
            }
        }
        let (number, low) = state.order[node];
        if number == low {
            let mut component = Vec::new();
            while let Some(member) = state.stack.pop() {
                state.on_stack.remove(member);
                component.push(member.clone());
                if member == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                state.components.push(component);
            }
        }
    }
    fn lower<'a>(state: &mut State<'a>, node: &'a ModulePath, low: usize) {
        if let Some(entry) = state.order.get_mut(node) {
            entry.1 = entry.1.min(low);
        }
    }
    let mut state = State {
        edges,
        order: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        components: Vec::new(),
    };
    for node in edges.keys() {
        if !state.order.contains_key(node) {
            visit(&mut state, node);
        }
    }
    state.components
}

/// A cycle as a problem at the first member's file, listing each member's edges inside the cycle.
fn problem(root: &Path, graph: &Graph, component: &[ModulePath]) -> Problem {
    let members: BTreeSet<&ModulePath> = component.iter().collect();
    let name = |module: &ModulePath| {
        if module.is_empty() {
            "crate".to_string()
        } else {
            module.join("::")
        }
    };
    let edges: Vec<String> = component
        .iter()
        .map(|module| {
            let inside: Vec<String> = graph.edges[module]
                .iter()
                .filter(|target| members.contains(target))
                .map(name)
                .collect();
            format!("{} → {}", name(module), inside.join(", "))
        })
        .collect();
    let file = &graph.file_of[&component[0]];
    Problem {
        file: file
            .strip_prefix(root)
            .unwrap_or(file)
            .to_string_lossy()
            .into_owned(),
        line: 1,
        message: format!(
            "an import cycle of {} modules (move what both sides need to a module below them): {}",
            component.len(),
            edges.join("; ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, files: &[(&str, &str)]) {
        for (path, text) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    #[test]
    fn a_sibling_cycle_through_use_and_super_is_found_and_a_parent_using_its_child_is_not() {
        let root = std::env::temp_dir().join(format!("tidy-modules-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        write(
            &root,
            &[
                ("src/lib.rs", "mod a;\nmod b;\nmod c;\npub struct Top;\n"),
                ("src/a.rs", "use crate::b::B;\npub struct A;\n"),
                ("src/b.rs", "pub struct B(super::a::A);\n"),
                (
                    "src/c.rs",
                    "mod d;\npub fn f() -> d::D { d::D }\n#[cfg(test)]\nmod tests { use crate::a::A; }\n",
                ),
                ("src/c/d.rs", "pub struct D;\n"),
            ],
        );
        let problems = cycles_of(&root, &root.join("src/lib.rs")).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].file, "src/a.rs");
        assert!(problems[0].message.contains("cycle of 2 modules"));
        assert!(
            problems[0].message.contains("a → b; b → a"),
            "{}",
            problems[0].message
        );
    }

    #[test]
    fn a_child_reaching_up_to_a_parent_that_names_it_is_a_cycle_only_through_a_sibling() {
        let root = std::env::temp_dir().join(format!("tidy-modules-up-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        write(
            &root,
            &[
                ("src/lib.rs", "mod p;\n"),
                (
                    "src/p.rs",
                    "mod q;\nmod r;\npub struct P;\npub fn f() { r::g() }\n",
                ),
                ("src/p/q.rs", "pub fn h(_: super::P) {}\n"),
                (
                    "src/p/r.rs",
                    "pub fn g() {}\nfn k(p: super::P) { super::q::h(p) }\n",
                ),
            ],
        );
        let problems = cycles_of(&root, &root.join("src/lib.rs")).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
    }
}
