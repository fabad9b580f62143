//! Emits the linker settings a Node-API addon needs.
fn main() {
    napi_build::setup();
}
