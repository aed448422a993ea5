# integrations/mix/lib/mix/tasks/gate.install.ex: `mix gate.install`: the release binary for
# this machine, downloaded, verified and installed under _build/gate-VERSION.
defmodule Mix.Tasks.Gate.Install do
  @shortdoc "Installs the gate release binary under _build/gate-VERSION"
  @moduledoc """
  Downloads `gate-VERSION-TARGET` and `gate-VERSION-TARGET.sha256` from
  `config :gate, base_url:` (`$version` replaced; default: gate's GitHub releases), checks
  the SHA-256 and that the binary runs and reports VERSION, and installs it as
  `_build/gate-VERSION/gate`. A mismatching checksum or version installs nothing.

      mix gate.install            # when it is not installed yet
      mix gate.install --force    # again, replacing it

  With `config :gate, path:` there is nothing to install: that binary is used (and its
  version checked against `config :gate, version:` when that is set). Exit 2 on any
  failure, with the URL and the reason.
  """
  use Mix.Task

  @impl true
  def run(args) do
    {opts, rest} = OptionParser.parse!(args, strict: [force: :boolean, if_missing: :boolean])

    if rest != [],
      do:
        fail(
          "mix gate.install takes no arguments (got #{Enum.join(rest, " ")}); options: --force"
        )

    case Application.fetch_env(:gate, :path) do
      {:ok, path} ->
        case Gate.bin_path() do
          {:ok, _} ->
            Mix.shell().info("gate: config :gate, path: #{path} is set: nothing to install")

          {:error, msg} ->
            fail(msg)
        end

      :error ->
        path = Gate.installed_path()

        if File.regular?(path) and not Keyword.get(opts, :force, false) do
          case Gate.bin_path() do
            {:ok, _} ->
              Mix.shell().info(
                "gate: gate #{Gate.configured_version()} is already installed: #{path}"
              )

            {:error, msg} ->
              fail(msg)
          end
        else
          install_or_exit()
        end
    end
  end

  @doc false
  def install_or_exit do
    case Gate.Installer.install() do
      {:ok, path} ->
        Mix.shell().info(
          "gate: installed gate #{Gate.configured_version()} (sha256 verified): #{path}"
        )

        path

      {:error, msg} ->
        fail(msg)
    end
  end

  @doc false
  def fail(msg) do
    Mix.shell().error("gate: error: " <> msg)
    exit({:shutdown, 2})
  end
end
