//! The layering of every workspace crate's modules: no crate's top-level modules import each
//! other in a circle.
//!
//! A module `a` depends on `b` when code of `a` (its file and the files of its submodules,
//! tests left out) names `crate::b::…`, or names an item the crate root re-exports from `b`
//! (`crate::Item`, with `pub use b::Item` in `lib.rs`). A circle means neither module can be
//! read, tested or moved without the other; the shared types belong in a leaf module both
//! import. Parsed with `syn`, so a path in a comment or a string is not counted.

// Reading the crates' sources needs std::fs, which clippy.toml forbids in the libraries.
#![allow(clippy::disallowed_methods)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The workspace crates whose `src/lib.rs` is a library (every one but the fuzz project).
fn library_crates() -> Vec<PathBuf> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace holds sol-testkit");
    let mut crates: Vec<PathBuf> = fs::read_dir(workspace)
        .expect("the workspace folder")
        .map(|entry| entry.expect("a workspace entry").path())
        .filter(|dir| dir.join("Cargo.toml").is_file() && dir.join("src/lib.rs").is_file())
        .collect();
    crates.sort();
    crates
}

/// Whether an item is compiled only for tests (`#[cfg(test)]`).
fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Meta>()
                .is_ok_and(|meta| meta.path().is_ident("test"))
    })
}

/// The first segment after `crate::` (or the root `super::`) of every path in a file.
#[derive(Default)]
struct RootNames {
    /// How many `super` lead from this file's module to the crate root.
    depth: usize,
    names: BTreeSet<String>,
}

impl RootNames {
    fn segments<'a>(&mut self, mut segments: impl Iterator<Item = &'a syn::Ident>) {
        let Some(first) = segments.next() else { return };
        let rest = if first == "crate" {
            segments.next()
        } else if first == "super" && self.depth > 0 {
            let mut next = segments.next();
            for _ in 1..self.depth {
                match next {
                    Some(ident) if ident == "super" => next = segments.next(),
                    _ => return,
                }
            }
            next
        } else {
            None
        };
        if let Some(name) = rest {
            self.names.insert(name.to_string());
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<syn::Ident>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.clone());
                self.use_tree(prefix, &path.tree);
                prefix.pop();
            }
            syn::UseTree::Group(group) => {
                for item in &group.items {
                    self.use_tree(prefix, item);
                }
            }
            syn::UseTree::Name(name) => {
                prefix.push(name.ident.clone());
                self.segments(prefix.iter());
                prefix.pop();
            }
            syn::UseTree::Rename(rename) => {
                prefix.push(rename.ident.clone());
                self.segments(prefix.iter());
                prefix.pop();
            }
            syn::UseTree::Glob(_) => self.segments(prefix.iter()),
        }
    }
}

impl<'ast> Visit<'ast> for RootNames {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(item) => &item.attrs,
            syn::Item::Fn(item) => &item.attrs,
            syn::Item::Impl(item) => &item.attrs,
            syn::Item::Use(item) => &item.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !test_only(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.segments(path.segments.iter().map(|segment| &segment.ident));
        syn::visit::visit_path(self, path);
    }
}

fn parse(file: &Path) -> syn::File {
    let text = fs::read_to_string(file).expect("a readable source file");
    syn::parse_file(&text).unwrap_or_else(|error| panic!("{}: {error}", file.display()))
}

/// The `.rs` files of a top-level module: its own file and every file under its folder, each
/// with how many `super` lead from it to the crate root.
fn module_files(src: &Path, module: &str) -> Vec<(PathBuf, usize)> {
    let mut files = Vec::new();
    for own in [
        src.join(format!("{module}.rs")),
        src.join(module).join("mod.rs"),
    ] {
        if own.is_file() {
            files.push((own, 1));
        }
    }
    let mut folders = vec![(src.join(module), 2)];
    while let Some((folder, depth)) = folders.pop() {
        let Ok(entries) = fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("a module folder entry").path();
            if path.is_dir() {
                folders.push((path, depth + 1));
            } else if path.extension().is_some_and(|ext| ext == "rs")
                && path.file_name().is_some_and(|name| name != "mod.rs")
            {
                files.push((path, depth));
            }
        }
    }
    files.sort();
    files
}

/// Each top-level module's dependencies on the others: `module -> dependency -> names`.
fn module_graph(krate: &Path) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let src = krate.join("src");
    let lib = parse(&src.join("lib.rs"));
    let mut modules = BTreeSet::new();
    // What the root re-exports, by the name it is reachable under: the module it comes from.
    let mut reexports = BTreeMap::new();
    for item in &lib.items {
        match item {
            syn::Item::Mod(item) if item.content.is_none() && !test_only(&item.attrs) => {
                modules.insert(item.ident.to_string());
            }
            syn::Item::Use(item) => {
                let mut found = Vec::new();
                collect_reexports(&mut Vec::new(), &item.tree, &mut found);
                reexports.extend(found);
            }
            _ => {}
        }
    }
    let mut graph = BTreeMap::new();
    for module in &modules {
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (file, depth) in module_files(&src, module) {
            let mut names = RootNames {
                depth,
                ..RootNames::default()
            };
            names.visit_file(&parse(&file));
            for name in names.names {
                let target = if modules.contains(&name) {
                    Some(name.clone())
                } else {
                    reexports.get(&name).cloned()
                };
                if let Some(target) = target.filter(|target| target != module) {
                    edges.entry(target).or_default().insert(name);
                }
            }
        }
        graph.insert(module.clone(), edges);
    }
    graph
}

/// `pub use a::b::Name` in the root: `Name -> a` (and `as Other`: `Other -> a`).
fn collect_reexports(
    prefix: &mut Vec<String>,
    tree: &syn::UseTree,
    found: &mut Vec<(String, String)>,
) {
    let mut add = |name: String, prefix: &[String]| {
        let module = prefix.iter().find(|segment| *segment != "self");
        if let Some(module) = module {
            found.push((name, module.clone()));
        }
    };
    match tree {
        syn::UseTree::Path(path) => {
            prefix.push(path.ident.to_string());
            collect_reexports(prefix, &path.tree, found);
            prefix.pop();
        }
        syn::UseTree::Group(group) => {
            for item in &group.items {
                collect_reexports(prefix, item, found);
            }
        }
        syn::UseTree::Name(name) => add(name.ident.to_string(), prefix),
        syn::UseTree::Rename(rename) => add(rename.rename.to_string(), prefix),
        syn::UseTree::Glob(_) => {}
    }
}

/// The circles of a graph: its strongly connected components of more than one module.
fn circles(graph: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>) -> Vec<Vec<String>> {
    let reaches = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(module) = stack.pop() {
            for next in graph
                .get(&module)
                .into_iter()
                .flat_map(|edges| edges.keys())
            {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, BTreeSet<String>> = graph
        .keys()
        .map(|module| (module, reaches(module)))
        .collect();
    let mut found: Vec<Vec<String>> = Vec::new();
    for module in graph.keys() {
        if found.iter().any(|circle| circle.contains(module)) {
            continue;
        }
        let circle: Vec<String> = graph
            .keys()
            .filter(|other| {
                *other == module
                    || (reach[module].contains(*other) && reach[*other].contains(module))
            })
            .cloned()
            .collect();
        if circle.len() > 1 {
            found.push(circle);
        }
    }
    found
}

#[test]
fn no_crate_has_a_circle_of_modules() {
    let mut problems = Vec::new();
    let crates = library_crates();
    assert!(crates.len() >= 8, "found only {crates:?}");
    for krate in crates {
        let graph = module_graph(&krate);
        for circle in circles(&graph) {
            let edges: Vec<String> = circle
                .iter()
                .flat_map(|from| {
                    graph[from]
                        .iter()
                        .filter(|(to, _)| circle.contains(to))
                        .map(move |(to, names)| format!("    {from} -> {to} ({names:?})"))
                })
                .collect();
            problems.push(format!(
                "{}: {}\n{}",
                krate.file_name().expect("a crate folder").to_string_lossy(),
                circle.join(", "),
                edges.join("\n")
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "module circles:\n{}",
        problems.join("\n")
    );
}

/// The check itself finds a circle, and names the paths that make it.
#[test]
fn a_circle_is_found() {
    let graph: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = [
        ("a", vec![("b", "Thing")]),
        ("b", vec![("c", "c")]),
        ("c", vec![("a", "a")]),
        ("d", vec![("a", "a")]),
    ]
    .into_iter()
    .map(|(from, edges)| {
        let edges = edges
            .into_iter()
            .map(|(to, name)| (to.to_string(), BTreeSet::from([name.to_string()])))
            .collect();
        (from.to_string(), edges)
    })
    .collect();
    assert_eq!(circles(&graph), vec![vec!["a", "b", "c"]]);
}

/// The parse: a `use` of a sibling, a path through a root re-export and a nested module's
/// `super::super` are dependencies; a path in a comment or a string and test-only code are not.
#[test]
fn dependencies_are_read_from_the_code() {
    let sandbox = sol_testkit::Sandbox::new();
    let krate = sandbox.root().as_std_path();
    let write = |path: &str, text: &str| {
        let file = krate.join(path);
        fs::create_dir_all(file.parent().expect("a parent")).expect("a folder");
        fs::write(file, text).expect("a file");
    };
    write(
        "src/lib.rs",
        "pub mod a;\npub mod b;\npub mod c;\npub mod d;\npub use c::{Leaf as Renamed};\n",
    );
    write(
        "src/a.rs",
        "use crate::b::Thing;\n// crate::d::Nothing\nconst S: &str = \"crate::d\";\n",
    );
    write(
        "src/b.rs",
        "pub struct Thing;\npub fn f() -> crate::Renamed { todo!() }\n",
    );
    write(
        "src/c.rs",
        "mod inner;\npub struct Leaf;\n#[cfg(test)]\nmod tests { use crate::a::*; }\n",
    );
    write("src/c/inner.rs", "use super::super::d::Other;\n");
    write("src/d.rs", "pub struct Other;\n");
    let graph = module_graph(krate);
    let edges = |from: &str| -> Vec<&String> { graph[from].keys().collect() };
    assert_eq!(edges("a"), ["b"]);
    assert_eq!(edges("b"), ["c"]);
    assert_eq!(edges("c"), ["d"]);
    assert!(edges("d").is_empty());
    assert!(circles(&graph).is_empty());
    write(
        "src/d.rs",
        "pub struct Other;\nfn g() { let _ = crate::a::S; }\n",
    );
    assert_eq!(
        circles(&module_graph(krate)),
        vec![vec!["a", "b", "c", "d"]]
    );
}
