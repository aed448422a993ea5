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
      mix gate baseline update --commit    # snapshot, baseline, config, hook, watch, run
      mix gate --version

  The binary is `config :gate, path:` when set, else `_build/gate-VERSION/gate`, installed
  first by `mix gate.install` when it is not there (see `Gate`).
  """
  use Mix.Task

  # gate's own commands and options: passed as they are; anything else is `gate run ARGS`
  @commands ~w(run snapshot baseline config hook watch help --help -h --version -V)

  @impl true
  def run(args) do
    args =
      case args do
        [cmd | _] when cmd in @commands -> args
        _ -> ["run" | args]
      end

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
      code -> exit({:shutdown, code})
    end
  end
end
