//! The napi boundary: keeps caught panics off stderr while an export runs, and reads
//! JavaScript numbers back as the integers Rust wrote.

use std::cell::Cell;
use std::panic;

use serde_json::{Number, Value};

thread_local! {
    static IN_EXPORT: Cell<u32> = const { Cell::new(0) };
}

/// Marks the current thread as inside an export until dropped, also on unwind.
struct ExportGuard;

impl Drop for ExportGuard {
    fn drop(&mut self) {
        IN_EXPORT.with(|depth| depth.set(depth.get().saturating_sub(1)));
    }
}

/// Runs an export's body with panic output suppressed; `#[napi(catch_unwind)]`
/// around it turns the panic into a JavaScript error.
pub(crate) fn quiet<T>(body: impl FnOnce() -> T) -> T {
    IN_EXPORT.with(|depth| depth.set(depth.get() + 1));
    let _guard = ExportGuard;
    body()
}

pub(crate) fn install_quiet_hook() {
    let previous = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if IN_EXPORT.with(Cell::get) == 0 {
            previous(info);
        }
    }));
}

/// The largest integer a JavaScript number holds exactly (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// `value` with every whole number written as an integer.
///
/// napi reads a JavaScript number into JSON as an integer only within `u32` (or `i32` when
/// negative); a larger whole number, such as a token total Rust wrote as a `u64` and Pi
/// stored in the session, comes back as a float, which a `u64` field refuses. Every
/// finite whole number within JavaScript's exact range is turned back into an integer;
/// fractions and anything beyond that range stay as they are.
pub(crate) fn whole_numbers(value: Value) -> Value {
    match value {
        Value::Number(number) => Value::Number(whole_number(number)),
        Value::Array(items) => Value::Array(items.into_iter().map(whole_numbers).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, item)| (key, whole_numbers(item)))
                .collect(),
        ),
        other => other,
    }
}

fn whole_number(number: Number) -> Number {
    match number.as_f64() {
        Some(float)
            if number.is_f64() && float.fract() == 0.0 && float.abs() <= MAX_SAFE_INTEGER =>
        {
            // Exact: a whole float within 2^53 converts without rounding.
            #[allow(clippy::cast_possible_truncation)]
            let integer = float as i64;
            if integer >= 0 {
                Number::from(integer.unsigned_abs())
            } else {
                Number::from(integer)
            }
        }
        _ => number,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn float(value: f64) -> Value {
        Value::Number(Number::from_f64(value).expect("finite"))
    }

    #[test]
    fn whole_floats_become_integers_anywhere_in_a_value() {
        let read =
            json!({"a": [float(4_303_655_164.0), {"b": float(-5_000_000_000.0)}], "c": float(0.5)});
        let whole = whole_numbers(read);
        assert_eq!(whole["a"][0].as_u64(), Some(4_303_655_164));
        assert_eq!(whole["a"][1]["b"].as_i64(), Some(-5_000_000_000));
        assert!(whole["c"].is_f64(), "a fraction stays a float");
        assert_eq!(
            whole_numbers(float(1e300)),
            float(1e300),
            "beyond 2^53 stays a float"
        );
        assert_eq!(whole_numbers(float(-0.0)).as_u64(), Some(0));
        assert_eq!(whole_numbers(json!(7)), json!(7));
    }

    /// A session whose totals passed `u32::MAX` tokens could not be resumed: napi read the
    /// stored totals back as floats, which the savings entry refuses.
    #[test]
    fn savings_totals_beyond_u32_read_back_after_the_boundary() {
        let mut data = sol_core::savings::Savings::default().to_entry_data();
        data["layers"][0]["cacheRead"] = float(4_303_655_164.0);
        assert!(sol_core::savings::Savings::from_entry_data(&data).is_err());
        let restored = sol_core::savings::Savings::from_entry_data(&whole_numbers(data))
            .expect("whole numbers read back");
        assert_eq!(
            restored.to_entry_data()["layers"][0]["cacheRead"].as_u64(),
            Some(4_303_655_164)
        );
    }
}
