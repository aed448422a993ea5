# integrations/mix/lib/mix/tasks/gate.ex: `mix gate`: gate on this project, its exit code
# passed through.
defmodule Mix.Tasks.Gate do
  @shortdoc "Runs the gate memory quality gate on this project"
  @moduledoc """
  Runs gate on the current project and exits with gate's exit code: 0 passed, 1 a memory
  rule or a test failed, 2 gate could not run.

      mix gate [gate run options] [-- mix test arguments]
      mix gate -- --include leak
      mix gate snapshot --format json      # gate's other commands pass through:
      mix gate baseline update --commit    # snapshot, baseline, config, hook, watch, merge, run
      mix gate merge result-*.json         # partitions' results joined (gate merge)
      mix gate --version

  The binary is `config :gate, path:` when set, else `_build/gate-VERSION/gate`, installed
  first by `mix gate.install` when it is not there (see `Gate`).
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
