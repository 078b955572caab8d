//! The app decodes only the model's wire types: no type of its own derives or implements `Deserialize`, and every
//! type named where it decodes JSON is imported from `cellscope_model::api`.

use super::Problem;
use std::path::Path;
use syn::spanned::Spanned;
use syn::visit::Visit;

/// The crates that read what the server sends, and their sources.
pub(super) const DECODERS: [&str; 1] = ["app/src"];

/// The functions that decode JSON into the type of their turbofish.
const DECODING_FUNCTIONS: [&str; 4] = ["json", "from_slice", "from_str", "from_value"];

/// A problem per own `Deserialize` type and per decoded type that does not come from `cellscope_model::api`.
pub(super) fn check(root: &Path, files: &[String]) -> anyhow::Result<Vec<Problem>> {
    let mut problems = Vec::new();
    for file in files {
        if !file.ends_with(".rs")
            || !DECODERS
                .iter()
                .any(|dir| file.starts_with(&format!("{dir}/")))
        {
            continue;
        }
        let text = std::fs::read_to_string(root.join(file))?;
        let parsed = syn::parse_file(&text)
            .map_err(|error| anyhow::anyhow!("cannot parse {file}: {error}"))?;
        let mut visitor = Decoding {
            file,
            api_names: api_imports(&parsed),
            problems: Vec::new(),
        };
        visitor.visit_file(&parsed);
        problems.extend(visitor.problems);
    }
    Ok(problems)
}

/// The names a file imports from `cellscope_model::api` (under their local name).
fn api_imports(file: &syn::File) -> Vec<String> {
    fn walk(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<String>) {
        let from_api = prefix.len() >= 2 && prefix[0] == "cellscope_model" && prefix[1] == "api";
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                walk(&path.tree, prefix, out);
                prefix.pop();
            }
            syn::UseTree::Name(name) if from_api => out.push(name.ident.to_string()),
            syn::UseTree::Rename(rename) if from_api => out.push(rename.rename.to_string()),
            syn::UseTree::Group(group) => {
                for tree in &group.items {
                    walk(tree, prefix, out);
                }
            }
            _ => {}
        }
    }
    let mut names = Vec::new();
    for item in &file.items {
        if let syn::Item::Use(item) = item {
            walk(&item.tree, &mut Vec::new(), &mut names);
        }
    }
    names
}

struct Decoding<'a> {
    file: &'a str,
    api_names: Vec<String>,
    problems: Vec<Problem>,
}

impl Decoding<'_> {
    fn report(&mut self, span: proc_macro2::Span, message: String) {
        self.problems.push(Problem {
            file: self.file.to_string(),
            line: span.start().line,
            message,
        });
    }

    /// Whether a decoded type is the model's: imported from `cellscope_model::api` or written with that path.
    fn is_api_type(&self, path: &syn::Path) -> bool {
        let segments: Vec<String> = path
            .segments
            .iter()
            .map(|segment| segment.ident.to_string())
            .collect();
        match segments.as_slice() {
            [name] => self.api_names.contains(name),
            [first, second, ..] => first == "cellscope_model" && second == "api",
            [] => false,
        }
    }
}

impl<'ast> Visit<'ast> for Decoding<'_> {
    fn visit_attribute(&mut self, attribute: &'ast syn::Attribute) {
        if attribute.path().is_ident("derive") {
            let tokens = attribute.meta.to_token_stream_string();
            if tokens.contains("Deserialize") {
                self.report(
                    attribute.span(),
                    "the app derives `Deserialize`: decode a type of `cellscope_model::api` instead".to_string(),
                );
            }
        }
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        if let Some((_, trait_path, _)) = &item.trait_
            && trait_path
                .segments
                .last()
                .is_some_and(|segment| segment.ident == "Deserialize")
        {
            self.report(
                item.span(),
                "the app implements `Deserialize`: decode a type of `cellscope_model::api` instead"
                    .to_string(),
            );
        }
        syn::visit::visit_item_impl(self, item);
    }

    fn visit_expr_path(&mut self, expr: &'ast syn::ExprPath) {
        if let Some(last) = expr.path.segments.last()
            && DECODING_FUNCTIONS.contains(&last.ident.to_string().as_str())
            && let syn::PathArguments::AngleBracketed(arguments) = &last.arguments
        {
            for argument in &arguments.args {
                if let syn::GenericArgument::Type(syn::Type::Path(decoded)) = argument
                    && !self.is_api_type(&decoded.path)
                {
                    let name = quote_path(&decoded.path);
                    self.report(
                        expr.span(),
                        format!("the app decodes `{name}`, which is not imported from `cellscope_model::api`"),
                    );
                }
            }
        }
        syn::visit::visit_expr_path(self, expr);
    }
}

fn quote_path(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

/// The text of an attribute's meta, for a substring test.
trait TokenText {
    fn to_token_stream_string(&self) -> String;
}

impl TokenText for syn::Meta {
    fn to_token_stream_string(&self) -> String {
        quote::ToTokens::to_token_stream(self).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(text: &str) -> Vec<String> {
        let parsed = syn::parse_file(text).unwrap();
        let mut visitor = Decoding {
            file: "app/src/x.rs",
            api_names: api_imports(&parsed),
            problems: Vec::new(),
        };
        visitor.visit_file(&parsed);
        visitor
            .problems
            .into_iter()
            .map(|problem| problem.message)
            .collect()
    }

    #[test]
    fn model_types_pass_and_own_or_foreign_types_are_named() {
        let good = "use cellscope_model::api::{IndexBody, OfflineMeta as Meta};\n\
                    fn f() { let _ = json::<IndexBody>(u); let _ = serde_json::from_str::<Meta>(t); \
                    let _ = serde_json::from_slice::<cellscope_model::api::ErrorBody>(b); }";
        assert!(problems(good).is_empty(), "{:?}", problems(good));
        let bad = "use cellscope_model::IndexBody;\n#[derive(Debug, serde::Deserialize)]\nstruct Mine;\n\
                   fn f() { let _ = json::<IndexBody>(u); let _ = serde_json::from_str::<serde_json::Value>(t); }";
        let found = problems(bad);
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found[0].contains("derives `Deserialize`"));
        assert!(found[1].contains("`IndexBody`"));
        assert!(found[2].contains("`serde_json::Value`"));
    }
}
