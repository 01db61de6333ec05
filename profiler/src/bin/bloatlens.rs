//! The `bloatlens` command line.
//!
//! `bloatlens run -cp <classpath> <MainClass> [args...]` runs a program under the Bloatlens VM and
//! exits as `java` would. Errors of the VM itself (no JDK, main class missing, bad class file,
//! unsupported native, budget exhausted) print one line to stderr and exit with status 2.

use bloatlens_profiler::run::{run, RunConfig};
use bloatlens_profiler::vm::{Limits, Outcome};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "bloatlens", version, about = "Find runtime bloat in Java programs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a Java program under the Bloatlens VM, as `java -cp <classpath> <MainClass>` would.
    Run(RunArgs),
}

#[derive(Args)]
struct RunArgs {
    /// Class path: directories and jar files separated by ':'.
    #[arg(long = "class-path", default_value = ".")]
    class_path: String,
    #[command(flatten)]
    budgets: Budgets,
    /// The JDK whose class library to run (default: JAVA_HOME, else the `java` on PATH).
    #[arg(long)]
    jdk: Option<PathBuf>,
    /// The main class, e.g. `com.example.Main`.
    main_class: String,
    /// Arguments passed to main.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

#[derive(Args)]
struct Budgets {
    /// Stop after this many bytecode instructions.
    #[arg(long, default_value_t = Limits::default().max_instructions)]
    max_instructions: u64,
    /// Stop after this many seconds of wall-clock time.
    #[arg(long, default_value_t = Limits::default().max_wall.as_secs())]
    max_seconds: u64,
    /// Heap cap in MiB; beyond it allocation throws OutOfMemoryError.
    #[arg(long, default_value_t = Limits::default().max_heap_bytes >> 20)]
    max_heap_mb: u64,
    /// Java frames per thread; beyond it a call throws StackOverflowError.
    #[arg(long, default_value_t = Limits::default().max_stack_depth)]
    max_stack_depth: usize,
}

impl Budgets {
    fn limits(&self) -> Limits {
        Limits {
            max_instructions: self.max_instructions,
            max_wall: Duration::from_secs(self.max_seconds),
            max_heap_bytes: self.max_heap_mb << 20,
            max_stack_depth: self.max_stack_depth,
        }
    }
}

fn main() -> ExitCode {
    // `-cp` and `-classpath` are what java users type; clap's short flags are single letters.
    let argv = std::env::args().map(|a| match a.as_str() {
        "-cp" | "-classpath" => "--class-path".to_string(),
        _ => a,
    });
    let cli = Cli::parse_from(argv);
    match cli.command {
        Command::Run(a) => {
            let config = RunConfig {
                class_path: a.class_path,
                main_class: a.main_class,
                args: a.args,
                jdk: a.jdk,
                limits: a.budgets.limits(),
                capture: false,
            };
            match run(&config) {
                Err(e) => {
                    eprintln!("bloatlens: error: {e}");
                    ExitCode::from(2)
                }
                Ok(result) => {
                    if let Outcome::Stopped(e) = &result.outcome {
                        eprintln!("bloatlens: error: {e}");
                    }
                    ExitCode::from(result.status() as u8)
                }
            }
        }
    }
}
