//! Running a command module: compile, link the imports, call `_start`, turn `proc_exit` and
//! traps into an exit status.

use crate::ctx::WasiCtx;
use crate::host::{ExitCode, add_to_linker};
use wasmtime::{Engine, Instance, Linker, Module, Store};

/// How a run ended.
#[derive(Debug)]
pub enum Outcome {
    /// `_start` returned (status 0) or the guest called `proc_exit(status)`.
    Exit(u32),
    /// The guest trapped (`unreachable`, an out-of-bounds access, a bad pointer passed to a
    /// host call, ...): the error says where.
    Trap(wasmtime::Error),
}

/// Why a program could not be run at all.
#[derive(Debug)]
pub enum LoadError {
    /// The bytes are not a WebAssembly binary.
    NotWasm,
    /// Compiling, linking or instantiating failed (a malformed module, an import this host
    /// does not provide, no `_start`).
    Module(wasmtime::Error),
}

impl core::fmt::Display for LoadError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LoadError::NotWasm => f.write_str("not a WebAssembly module (no \\0asm header)"),
            LoadError::Module(e) => write!(f, "{e:#}"),
        }
    }
}

impl std::error::Error for LoadError {}

/// An engine, with Cranelift and the host's defaults.
pub fn engine() -> Engine {
    Engine::default()
}

/// An engine whose guests may use `bytes` of wasm stack (the default engine's is 512 KiB).
/// The guest must run on a thread whose native stack holds that much and the host's frames
/// around it.
pub fn engine_with_stack(bytes: usize) -> Result<Engine, LoadError> {
    let mut config = wasmtime::Config::new();
    // The engine checks the wasm stack against the fibers' stack of async calls, which this
    // host does not make: that one is raised with it.
    config.max_wasm_stack(bytes);
    config.async_stack_size(bytes.saturating_add(1 << 20));
    Engine::new(&config).map_err(LoadError::Module)
}

/// Compiles `bytes` (a binary module; text is refused).
pub fn compile(engine: &Engine, bytes: &[u8]) -> Result<Module, LoadError> {
    if !bytes.starts_with(b"\0asm") {
        return Err(LoadError::NotWasm);
    }
    Module::from_binary(engine, bytes).map_err(LoadError::Module)
}

/// A linker with every `wasi_snapshot_preview1` import defined.
pub fn linker(engine: &Engine) -> Result<Linker<WasiCtx>, LoadError> {
    let mut linker = Linker::new(engine);
    add_to_linker(&mut linker).map_err(LoadError::Module)?;
    Ok(linker)
}

/// Instantiates `module` in `store` and attaches the instance's exported memory to the store's
/// context, so that host calls find it without looking the export up by name each time (a
/// context serves one instance; an instance made otherwise still works, its calls looking the
/// export up).
pub fn instantiate(
    linker: &Linker<WasiCtx>,
    module: &Module,
    store: &mut Store<WasiCtx>,
) -> Result<Instance, LoadError> {
    let instance = linker
        .instantiate(&mut *store, module)
        .map_err(LoadError::Module)?;
    store.data_mut().memory = instance.get_memory(&mut *store, "memory");
    Ok(instance)
}

/// Instantiates `module` with `ctx` and runs its `_start` (a command) or `_initialize` (a
/// reactor) to completion.
pub fn run(linker: &Linker<WasiCtx>, module: &Module, ctx: WasiCtx) -> Result<Outcome, LoadError> {
    let mut store = Store::new(module.engine(), ctx);
    let instance = instantiate(linker, module, &mut store)?;
    let entry = ["_start", "_initialize"]
        .into_iter()
        .find_map(|name| instance.get_func(&mut store, name));
    let Some(entry) = entry else {
        return Err(LoadError::Module(wasmtime::Error::msg(
            "the module exports neither `_start` (a command) nor `_initialize` (a reactor)",
        )));
    };
    let entry = entry.typed::<(), ()>(&store).map_err(LoadError::Module)?;
    Ok(match entry.call(&mut store, ()) {
        Ok(()) => Outcome::Exit(0),
        Err(e) => match e.downcast_ref::<ExitCode>() {
            Some(ExitCode(code)) => Outcome::Exit(*code),
            None => Outcome::Trap(e),
        },
    })
}
