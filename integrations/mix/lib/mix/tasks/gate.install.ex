# integrations/mix/lib/mix/tasks/gate.install.ex: `mix gate.install`: the release binary for
# this machine, downloaded, verified and installed under _build/gate-VERSION.
defmodule Mix.Tasks.Gate.Install do
  @shortdoc "Installs the gate release binary under _build/gate-VERSION"
  @moduledoc """
  Installs the gate release binary for this machine as `_build/gate-VERSION/gate`.

      mix gate.install            # when it is not installed yet (--if-missing: the same)
      mix gate.install --force    # again, replacing it

  It downloads `gate-VERSION-TARGET` and `gate-VERSION-TARGET.sha256` (sha256sum's format)
  from `config :gate, base_url:` (default: gate's GitHub releases, `$version` replaced),
  checks the SHA-256, checks that the binary runs here and that its `--version` is VERSION,
  and only then moves it into place. A checksum or version that does not match, a missing
  `.sha256`, or a binary that does not run here installs nothing.

  VERSION is `config :gate, version:`, else this package's version (`Gate.default_version/0`).
  TARGET is `linux-x86_64` or `linux-aarch64` (glibc 2.36 or later); elsewhere, build gate
  from source and set `config :gate, path:` (`Gate`). `_build/gate-VERSION` is shared by
  every `MIX_ENV`, and a CI cache of `_build` keeps it.

  `mix gate` runs this first when the binary is missing, so `mix gate.install` is only
  needed to install ahead of time (a CI image, a cache step) or to replace the binary.

  ## Network

  Downloads use OTP's `:httpc`; https is verified against the system's CA certificates
  (`:public_key.cacerts_get/0`). `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` (or their
  lowercase spellings) are honoured. Without a network, set `config :gate, path:` to a gate
  binary on disk, or `base_url:` to a mirror holding the same files
  (`BASE/gate-VERSION-TARGET` and its `.sha256`).

  ## Exit codes

  `0` installed, or nothing to do: already installed, or `config :gate, path:` is set (then
  that binary is checked: it exists, is executable, and reports `config :gate, version:`
  when that is set). `2` on any failure, naming the URL or the path and the reason.
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
