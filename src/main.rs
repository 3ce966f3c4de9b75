//! The `iotrial` command line: parses arguments, hands them to the subcommand's module in
//! [`cli`], and sets the exit status (0 ok, 1 failure, 2 bad input, 130 interrupted).

mod cli;

use clap::Parser;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second signal while stopping exits at once.
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, stop.clone());
        let _ = signal_hook::flag::register(sig, stop.clone());
    }
    match cli::dispatch(cli, &stop) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("iotrial: {}", cli::errors::message(&e));
            ExitCode::from(cli::errors::exit_status(&e))
        }
    }
}
