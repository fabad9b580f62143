//! The napi boundary: keeps caught panics off stderr while an export runs.

use std::cell::Cell;
use std::panic;

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
