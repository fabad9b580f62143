//! Every fuzz target on stable, bounded: each seed of `fixtures/fuzz/<target>/` as it is,
//! then a fixed number of proptest inputs (the seeds mutated byte by byte, spliced, and
//! arbitrary bytes). With `PROPTEST_RNG_SEED` set, as the test command sets it, the inputs
//! are the same on every run; a failure is kept in `proptest-regressions/` and a crash found
//! by `cargo fuzz` is added to the seeds as `regression-*` with a named test below.

use std::sync::OnceLock;

use proptest::prelude::*;
use sol_fuzz::{TARGETS, Target};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/fuzz");

/// Generated inputs per target: a few seconds each in a debug build.
const CASES: u32 = 512;

fn target(name: &str) -> Target {
    *TARGETS
        .iter()
        .find(|target| target.name == name)
        .unwrap_or_else(|| panic!("no target {name}"))
}

/// The seeds of `name`, in file-name order.
fn seeds(name: &str) -> Vec<(String, Vec<u8>)> {
    #[allow(clippy::disallowed_methods)] // The seed corpus is read from disk.
    let entries = std::fs::read_dir(format!("{FIXTURES}/{name}")).expect("a seed folder");
    let mut seeds: Vec<(String, Vec<u8>)> = entries
        .map(|entry| {
            let path = entry.expect("a seed").path();
            let file = path
                .file_name()
                .and_then(|name| name.to_str())
                .expect("a UTF-8 seed name")
                .to_owned();
            #[allow(clippy::disallowed_methods)] // The seed corpus is read from disk.
            let bytes = std::fs::read(&path).expect("a readable seed");
            (file, bytes)
        })
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "target {name} has no seeds");
    seeds
}

#[test]
fn every_target_has_seeds_and_a_fuzz_target_file() {
    for target in TARGETS {
        assert!(!seeds(target.name).is_empty());
        let file = format!(
            "{}/../fuzz/fuzz_targets/{}.rs",
            env!("CARGO_MANIFEST_DIR"),
            target.name
        );
        #[allow(clippy::disallowed_methods)] // The cargo-fuzz project is checked on disk.
        let source = std::fs::read_to_string(&file).unwrap_or_else(|_| panic!("no {file}"));
        assert!(
            source.contains(&format!("sol_fuzz::{}(", target.name)),
            "{file} does not call sol_fuzz::{}",
            target.name
        );
    }
}

/// One change to a seed.
#[derive(Debug, Clone)]
enum Mutation {
    /// Overwrite the byte at (position mod length).
    Set(usize, u8),
    /// Insert bytes at (position mod length + 1).
    Insert(usize, Vec<u8>),
    /// Remove up to `n` bytes at (position mod length).
    Remove(usize, usize),
    /// Cut the input at (position mod length + 1).
    Truncate(usize),
    /// Repeat a span of up to `n` bytes at (position mod length).
    Repeat(usize, usize, u8),
}

/// Bytes a mutation likes to insert: the structure of JSON, paths, URLs and logs.
fn interesting() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 1..8),
        prop::sample::select(vec![
            &b"\xff"[..],
            b"\n",
            b"\r\n",
            b"\"",
            b"\\",
            b"{}",
            b"[]",
            b",",
            b":",
            b"null",
            b"-0",
            b"1e999",
            b"%2F",
            b"%2e%2e/",
            b"%00",
            b"/../",
            b"file://",
            b"\\\\?\\",
            b"C:",
            b"~",
            b"@",
            b"\xc3\xa9",
            b"\xe2\x80\xaf",
            b"\xf0\x9f\xa6\x80",
            b"\xed\xa0\x80",
            b"FAILED",
            b"PASSWORD=",
        ])
        .prop_map(<[u8]>::to_vec),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Set(at, byte)),
        (any::<usize>(), interesting()).prop_map(|(at, bytes)| Mutation::Insert(at, bytes)),
        (any::<usize>(), 1..64usize).prop_map(|(at, n)| Mutation::Remove(at, n)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), 1..32usize, 2..16u8)
            .prop_map(|(at, n, times)| Mutation::Repeat(at, n, times)),
    ]
}

fn apply(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for change in mutations {
        let len = bytes.len();
        match change {
            Mutation::Set(at, byte) if len > 0 => bytes[at % len] = *byte,
            Mutation::Insert(at, more) => {
                let at = at % (len + 1);
                bytes.splice(at..at, more.iter().copied());
            }
            Mutation::Remove(at, n) if len > 0 => {
                let at = at % len;
                bytes.drain(at..(at + n).min(len));
            }
            Mutation::Truncate(at) => bytes.truncate(at % (len + 1)),
            Mutation::Repeat(at, n, times) if len > 0 => {
                let at = at % len;
                let span = bytes[at..(at + n).min(len)].to_vec();
                for _ in 1..*times {
                    bytes.splice(at..at, span.iter().copied());
                }
            }
            _ => {}
        }
    }
    bytes
}

/// A seed mutated, two seeds spliced, or arbitrary bytes.
fn inputs(seeds: &'static [(String, Vec<u8>)]) -> impl Strategy<Value = Vec<u8>> {
    let seed = prop::sample::select(seeds).prop_map(|(_, bytes)| bytes);
    prop_oneof![
        6 => (seed.clone(), proptest::collection::vec(mutation(), 1..6))
            .prop_map(|(bytes, changes)| apply(bytes, &changes)),
        1 => (seed.clone(), seed, any::<usize>(), any::<usize>()).prop_map(|(a, b, i, j)| {
            let mut out = a[..i % (a.len() + 1)].to_vec();
            out.extend_from_slice(&b[j % (b.len() + 1)..]);
            out
        }),
        1 => proptest::collection::vec(any::<u8>(), 0..512),
    ]
}

macro_rules! fuzz_target_tests {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                use super::*;

                fn corpus() -> &'static [(String, Vec<u8>)] {
                    static SEEDS: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
                    SEEDS.get_or_init(|| seeds(stringify!($name)))
                }

                #[test]
                fn every_seed() {
                    let run = target(stringify!($name)).run;
                    for (file, bytes) in corpus() {
                        let outcome = std::panic::catch_unwind(|| run(bytes));
                        assert!(outcome.is_ok(), "seed {file} of {} failed", stringify!($name));
                    }
                }

                proptest! {
                    #![proptest_config(ProptestConfig {
                        cases: CASES,
                        max_shrink_iters: 2_000,
                        ..ProptestConfig::default()
                    })]

                    #[test]
                    fn generated(input in inputs(corpus())) {
                        (target(stringify!($name)).run)(&input);
                    }
                }
            }
        )*

        #[test]
        fn every_target_is_tested() {
            let tested = [$(stringify!($name)),*];
            let names: Vec<&str> = TARGETS.iter().map(|target| target.name).collect();
            assert_eq!(names, tested);
        }
    };
}

fuzz_target_tests!(
    config,
    update_plan,
    then_run,
    receipt,
    path,
    recall,
    placeholder,
    ledger,
    store,
    session,
    secret_gate,
);

/// Crashes `cargo fuzz` found, each kept as a seed named `regression-*` and run here by name.
mod regressions {
    use super::*;

    fn run_seed(target_name: &str, file: &str) {
        #[allow(clippy::disallowed_methods)] // The seed corpus is read from disk.
        let bytes = std::fs::read(format!("{FIXTURES}/{target_name}/{file}")).expect("the seed");
        (target(target_name).run)(&bytes);
    }

    /// `file://host/share%2f/...` on POSIX: refused as a foreign host before its encoded
    /// separator is looked at. The target's oracle expected the separator's own error; any
    /// refusal is what matters (the path is never decoded), so the oracle now asks only that.
    #[test]
    fn path_foreign_host_with_an_encoded_separator() {
        run_seed("path", "regression-foreign-host-encoded-separator");
    }

    /// `file:///:C/../:%2fC/..`: the URL parser removes the segment holding `%2f` with the
    /// `..` after it (as Node's does), so the path is `/` and nothing was decoded. The
    /// oracle now removes dot segments before it looks for an encoded separator.
    #[test]
    fn path_dot_segment_removes_an_encoded_separator() {
        run_seed("path", "regression-dot-segment-removes-encoded-separator");
    }
}
