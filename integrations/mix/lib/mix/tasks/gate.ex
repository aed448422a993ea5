# integrations/mix/lib/mix/tasks/gate.ex: `mix gate`: gate on this project, its exit code
# passed through.
defmodule Mix.Tasks.Gate do
  @source_url Mix.Project.config()[:source_url]
  @requirement Gate.requirement()

  @shortdoc "Runs the gate memory quality gate on this project's test suite"
  @moduledoc """
  Runs gate on the current project and exits with gate's exit code.

  gate starts the project's node (`MIX_ENV=test`, not distributed, as under `mix test`),
  forces garbage collection and snapshots its memory, runs `mix test` inside the node,
  snapshots again after another garbage collection, and judges what grew: every
  `erlang:memory` category, ETS tables, refc binaries, processes and mailboxes, atoms,
  modules, ports, persistent_term, allocators and, in a git repository, the committed
  baseline. Each failure names what grew and the test module that grew it. It writes a
  JUnit report (`_build/gate/junit.xml`) and prints a summary; a red `mix test` is never a
  green gate.

      mix gate [gate run options] [-- mix test arguments]

      mix gate                              # gate run on this project
      mix gate -q -- --exclude slow         # after --: mix test's arguments, unchanged
      MIX_ENV=test mix gate                 # see "Mix environment" below

  The binary is `config :gate, path:` when set, else the release `mix gate.install` put in
  `_build/gate-VERSION/gate`, installed first when it is missing (`Mix.Tasks.Gate.Install`,
  `Gate`).

  ## Options

  `mix gate ARGS` is `gate run ARGS`; everything after `--` goes to `mix test`. The options
  most projects use (`mix gate run --help` lists them all):

    * `-q`, `--quiet` - no progress lines
    * `-c`, `--config FILE` - the configuration (default: `gate.toml` in the project, when
      there is one)
    * `--junit FILE` - the JUnit report (default: `_build/gate/junit.xml`)
    * `--summary FILE`, `--html FILE` - a Markdown summary, a self-contained HTML report
    * `--json FILE` - the run's result as JSON (`-` for stdout)
    * `--per-test` - the growth of every test, not only of every test module
    * `--repeat N` - leak or warm-up? the suite N times in one node; what grows in every
      run after the first fails
    * `--confirm` - after a failing verdict with one culprit test module, its test file runs
      alone in a fresh node and the finding says whether it leaks alone (every failing
      finding ends with the `mix gate` line that reproduces it)
    * `--warn-only` - memory findings are reported as warnings and never fail (failing tests
      still do)
    * `--baseline-ref REF` - the baseline to compare with (default: `origin/main`)
    * `--update-baseline --commit` - on the main branch: after a passing run, commit the
      new baseline

  A first argument that is a bare word is gate's command, passed as it is, so every gate
  command works through Mix:

      mix gate snapshot --json -           # one snapshot of the project's node, JSON on stdout
      mix gate baseline update --commit    # write and commit the memory baseline
      mix gate config init                 # a short commented gate.toml to start from
      mix gate config check                # validate gate.toml, print the effective configuration
      mix gate explain ets                 # what a rule measures, its usual causes and fixes
      mix gate hook install                # gate as a git pre-push hook
      mix gate merge r1.json r2.json       # one verdict for a suite split over CI jobs
      mix gate --version

  ## Exit codes

    * `0` - passed: every memory rule and every test passed
    * `1` - failed: a memory rule or a test failed, or bare `mix test` would exit non-zero
    * `2` - could not run: bad usage or configuration, the project did not compile, the node
      did not boot, no gate binary (a refused download, a missing `path:`)
    * `143` - SIGTERM: `mix gate` passes it on to gate, which stops the node first

  CI can tell "your code leaks" (1) from "gate could not run" (2). Ctrl-C halts Mix's VM at
  once (its own exit status); gate, started with `GATE_EXIT_WITH_PARENT=1`, then stops its
  node and exits: nothing is left running.

  ## Configuration: gate.toml

  What gate judges is configured in `gate.toml` at the project's root (or `--config FILE`).
  Without one, gate's defaults apply; they pass a clean suite. To start one:

      mix gate config init      # a short commented gate.toml: the limits teams change most
      mix gate config check     # validates it and prints the configuration in effect

  `config init` writes every value at its default and never replaces an existing file;
  `config check` refuses an unknown key, a wrong type or a bad value with exit 2, naming its
  file:line:col. Every key, its default and what it does:
  [docs/configuration.md](#{@source_url}/blob/main/docs/configuration.md) (also
  `mix gate config reference`). For example:

  ```toml
  [growth]
  max = "10 %"     # every erlang:memory category fails above 10 % AND above floor
  floor = "1 MB"

  [[ets.table]]
  name = "my_app_cache"
  max_bytes = "20 MB"
  ```

  Limits for one test go in the test itself: `@tag gate: [max_growth: "1 MB"]`. Every
  failing finding ends with `gate explain RULE`, which says what the rule measures, its
  usual causes and their fixes (`mix gate explain ets`). The package's own settings (which
  gate release, where from) are `config :gate` (`Gate`).

  ## Mix environment

  gate starts the project's node in `MIX_ENV=test` (`[node] mix_env` in gate.toml) whatever
  environment `mix gate` runs in. Run it as `MIX_ENV=test mix gate`: Mix then prepares the
  dependencies for `test`, the ones the node uses, instead of compiling them for `dev` too.
  To make `test` its default environment:

  ```elixir
  # mix.exs, Elixir 1.15 and later
  def cli, do: [preferred_envs: [gate: :test, "gate.install": :test]]

  # mix.exs, Elixir 1.14: in project/0
  preferred_cli_env: [gate: :test, "gate.install": :test]
  ```

  ## A Phoenix + Ecto project

  ```elixir
  # mix.exs
  defp deps do
    [
      # ...
      {:gate, "#{@requirement}", only: [:dev, :test], runtime: false}
    ]
  end

  defp aliases do
    [
      # ... Phoenix's own test alias, unchanged: gate runs the steps before "test" (the
      # database created and migrated) before its first snapshot, outside what it measures
      test: ["ecto.create --quiet", "ecto.migrate --quiet", "test"]
    ]
  end
  ```

  ```sh
  mix deps.get
  MIX_ENV=test mix gate          # the database reachable as for mix test (config/test.exs)
  ```

  Keep the alias a list with a `"test"` step: an alias given as a function, or without
  `"test"`, runs whole inside the measured window, as gate cannot tell its preparation from
  the tests. The Ecto SQL sandbox works as under `mix test`. The database connections'
  sockets hold input buffers of a few MB each until their next read; gate sets them aside in
  every snapshot (`[node] settle_timeout`), so they need no configuration.
  """
  use Mix.Task

  # gate's top-level options: passed as they are
  @top_options ~w(--help -h --version -V)

  @impl true
  def run(args) do
    args = gate_args(args)

    bin =
      case Gate.bin_path() do
        {:ok, path} ->
          path

        {:missing, path} ->
          Mix.shell().info("gate: #{path} is not installed yet: installing it (mix gate.install)")
          Mix.Tasks.Gate.Install.install_or_exit()

        {:error, msg} ->
          Mix.Tasks.Gate.Install.fail(msg)
      end

    case Gate.run(bin, args) do
      0 -> :ok
      {:error, msg} -> Mix.Tasks.Gate.Install.fail(msg)
      code -> exit({:shutdown, code})
    end
  end

  @doc """
  gate's arguments for `mix gate ARGS`: a first argument that is a bare lowercase word is
  gate's command (run, snapshot, baseline, config, hook, watch, merge, and any later one:
  gate names an unknown one), passed as it is, as are `--help` and `--version`; anything
  else (options, `--`, a test file) is `gate run ARGS`, whose errors say where mix test's
  arguments go.
  """
  def gate_args([first | _] = args) do
    if first in @top_options or Regex.match?(~r/\A[a-z][a-z-]*\z/, first),
      do: args,
      else: ["run" | args]
  end

  def gate_args([]), do: ["run"]
end
