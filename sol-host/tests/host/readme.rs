//! The README shows the example that `scripts/check-crates.sh` runs, and the output it prints.

fn read(relative: &str) -> String {
    std::fs::read_to_string(format!("{}/{relative}", env!("CARGO_MANIFEST_DIR"))).expect("readable")
}

/// The body of the first fenced block that opens with ```` ```{tag} ````.
fn block(markdown: &str, tag: &str) -> String {
    let opening = format!("```{tag}\n");
    let start = markdown.find(&opening).expect("a block") + opening.len();
    let end = markdown[start..].find("```").expect("a closed block");
    markdown[start..start + end].to_owned()
}

#[test]
fn the_readme_example_is_the_run_command_example_with_its_output() {
    let readme = read("README.md");
    assert_eq!(block(&readme, "rust"), read("examples/run_command.rs"));
    assert_eq!(block(&readme, "text"), read("examples/run_command.stdout"));
}
