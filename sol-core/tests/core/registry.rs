//! The readers of what Pi hands over about a provider's usage and a model's prices:
//! `ReportedUsage::from_pi_usage` and `ModelPrices::from_registry_cost`, on any JSON.

use proptest::prelude::*;
use serde_json::{Value, json};
use sol_core::savings::{ModelPrices, ReportedUsage};

use crate::pi_shapes::json_leaf;

/// A field as the readers count it: a finite positive number, truncated; else 0.
fn counted(value: Option<&Value>) -> u64 {
    match value.and_then(Value::as_f64) {
        Some(n) if n.is_finite() && n > 0.0 => n as u64,
        _ => 0,
    }
}

/// An object with the usage and cost keys, each missing or any leaf value.
fn pi_object(keys: &'static [&'static str]) -> impl Strategy<Value = Value> {
    prop::collection::vec(prop::option::of(json_leaf()), keys.len()).prop_map(move |values| {
        let mut object = serde_json::Map::new();
        for (key, value) in keys.iter().zip(values) {
            if let Some(value) = value {
                object.insert((*key).to_owned(), value);
            }
        }
        Value::Object(object)
    })
}

const USAGE: &[&str] = &["input", "cacheRead", "cacheWrite", "output", "totalTokens"];
const COST: &[&str] = &["input", "output", "cacheRead", "cacheWrite"];

proptest! {
    #[test]
    fn usage_counts_each_field_that_is_a_positive_number(usage in pi_object(USAGE)) {
        let read = ReportedUsage::from_pi_usage(&usage);
        prop_assert_eq!(read.requests, 1);
        prop_assert_eq!(read.input, counted(usage.get("input")));
        prop_assert_eq!(read.cache_read, counted(usage.get("cacheRead")));
        prop_assert_eq!(read.cache_write, counted(usage.get("cacheWrite")));
        prop_assert_eq!(read.output, counted(usage.get("output")));
    }

    #[test]
    fn a_cost_is_read_as_the_registry_prices_it_names(cost in pi_object(COST)) {
        let price = |key: &str| cost.get(key).and_then(Value::as_f64);
        let expected = match (price("input"), price("output")) {
            (Some(input), Some(output)) => ModelPrices::from_registry(
                input,
                output,
                price("cacheRead").unwrap_or(0.0),
                price("cacheWrite").unwrap_or(0.0),
            ),
            _ => None,
        };
        prop_assert_eq!(ModelPrices::from_registry_cost(&cost), expected);
    }
}

#[test]
fn pi_usage_and_cost_as_pi_writes_them() {
    let usage = json!({"input": 1200, "output": 80.9, "cacheRead": 5000, "cacheWrite": -3, "totalTokens": 6280});
    let read = ReportedUsage::from_pi_usage(&usage);
    assert_eq!(
        (read.input, read.cache_read, read.cache_write, read.output),
        (1200, 5000, 0, 80)
    );
    assert!(ReportedUsage::from_pi_usage(&json!(null)).is_empty());
    let cost = json!({"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75});
    assert_eq!(
        ModelPrices::from_registry_cost(&cost),
        ModelPrices::from_registry(3.0, 15.0, 0.3, 3.75)
    );
    assert!(ModelPrices::from_registry_cost(&cost).is_some());
    // Without a numeric input or output the registry names no prices.
    assert_eq!(
        ModelPrices::from_registry_cost(&json!({"input": "3", "output": 15})),
        None
    );
    // A free model is the registry's way of not knowing.
    assert_eq!(
        ModelPrices::from_registry_cost(&json!({"input": 0, "output": 0})),
        None
    );
}
