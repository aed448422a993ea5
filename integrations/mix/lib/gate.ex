# integrations/mix/lib/gate.ex: the package's API: which gate binary (config :gate, path:, or
# the one `mix gate.install` put under _build/gate-VERSION), its version check, and running
# it with its exit code, terminal and signals passed through.
defmodule Gate do
  # the gate release this package installs by default: the package's own version (VERSION,
  # which mix.exs reads; a new VERSION recompiles this module), and gate's repository
  @external_resource Path.expand("../VERSION", __DIR__)
  @version Mix.Project.config()[:version]
  @requirement "~> #{Version.parse!(@version).major}.#{Version.parse!(@version).minor}"
  @source_url Mix.Project.config()[:source_url]

  @moduledoc """
  Runs [gate](#{@source_url}), the memory quality gate for Elixir and Erlang test suites,
  from Mix, the way `esbuild` and `tailwind` are run: `mix gate.install` downloads the gate
  release binary for this machine and verifies its SHA-256, and `mix gate` runs it on the
  project and exits with gate's exit code. See `Mix.Tasks.Gate` for what a run does, its
  options, exit codes and a Phoenix + Ecto setup, and `Mix.Tasks.Gate.Install` for the
  download.

  ## Installation

  ```elixir
  # mix.exs
  def deps do
    [
      {:gate, "#{@requirement}", only: [:dev, :test], runtime: false}
    ]
  end
  ```

  `only: [:dev, :test], runtime: false`: the package is a build tool, never part of the
  application or its releases. It uses only OTP's and Elixir's own modules (`:httpc`,
  `:ssl`, `:public_key`, `:crypto`) and brings no other dependency.

  ## Configuration

  Every key is optional (`config/config.exs`):

  ```elixir
  config :gate,
    # the gate release to install and run (default: this package's version, #{@version});
    # a binary that reports another version is refused
    version: "#{@version}",
    # where gate-VERSION-linux-ARCH and its .sha256 are downloaded from; $version is replaced
    base_url: "#{@source_url}/releases/download/v$version",
    # a gate already on disk (built from source, or installed by the CI image): used as it
    # is, nothing is downloaded; it must be the executable itself
    path: "/usr/local/bin/gate"
  ```

  Release binaries exist for Linux with glibc (2.36 or later) on x86_64 and aarch64
  (`target/1`). On any other system (macOS, Alpine's musl), build gate from source (`make`
  in gate's repository) and set `path:`.

  What gate checks (its limits, rules and baselines) is configured in the project's own
  `gate.toml`, not here: see `Mix.Tasks.Gate`.

  ## Functions

  The functions below are what the two tasks use: which binary runs (`bin_path/0`), its
  version check (`binary_version/1`) and running it (`run/2`).
  """

  @default_base_url "#{@source_url}/releases/download/v$version"

  @doc false
  # the dependency requirement the docs show, {:gate, "~> MAJOR.MINOR", ...}
  def requirement, do: @requirement

  @doc "The gate release this package installs when `config :gate, version:` is not set."
  def default_version, do: @version

  @doc "The configured version (`config :gate, version:`), else the package's."
  def configured_version, do: Application.get_env(:gate, :version, @version)

  @doc "The download URL template (`config :gate, base_url:`); `$version` is replaced."
  def base_url, do: Application.get_env(:gate, :base_url, @default_base_url)

  @doc """
  The release target of this machine, as release binaries are named (`linux-x86_64`,
  `linux-aarch64`), from the running VM's system architecture.
  """
  def target(arch \\ to_string(:erlang.system_info(:system_architecture))) do
    case String.split(arch, "-") do
      [cpu | rest] when cpu in ["x86_64", "aarch64"] ->
        cond do
          List.last(rest) == "musl" ->
            {:error,
             "gate's release binaries are built for glibc, and #{arch} is musl (Alpine): build gate from source (make) and set config :gate, path: to it"}

          "linux" in rest ->
            {:ok, "linux-" <> cpu}

          true ->
            {:error, no_release(arch)}
        end

      _ ->
        {:error, no_release(arch)}
    end
  end

  defp no_release(arch) do
    "gate has no release binary for #{arch} (only linux-x86_64 and linux-aarch64): build gate from source (make) and set config :gate, path: to it"
  end

  @doc "Where `mix gate.install` puts gate VERSION: `_build/gate-VERSION/gate`."
  def installed_path(version \\ configured_version()) do
    Path.join([install_root(), "gate-#{version}", "gate"])
  end

  @doc "The project's _build (shared by every MIX_ENV, like the binary)."
  def install_root, do: Path.dirname(Mix.Project.build_path())

  @doc """
  The gate binary to run: `config :gate, path:` when set, else the installed one.
  Returns `{:ok, path}`, `{:missing, path}` (not installed yet) or `{:error, message}`; a
  configured version that the binary does not report is an error.
  """
  def bin_path do
    case Application.fetch_env(:gate, :path) do
      {:ok, path} ->
        path = Path.expand(to_string(path))

        cond do
          not File.exists?(path) ->
            {:error,
             "config :gate, path: #{path}: no such file: install gate there, or remove path: to let mix gate.install fetch it"}

          not File.regular?(path) ->
            {:error,
             "config :gate, path: #{path} is not a file (a directory?): point path: at the gate binary itself, e.g. /usr/local/bin/gate"}

          not executable?(path) ->
            {:error,
             "config :gate, path: #{path} is not executable: chmod +x #{path} (a downloaded release binary needs it), or point path: at an installed gate"}

          Application.fetch_env(:gate, :version) != :error ->
            check_version(
              path,
              configured_version(),
              "config :gate, path: #{path}",
              &"put that version there, or set version: #{inspect(&1)}"
            )

          true ->
            {:ok, path}
        end

      :error ->
        path = installed_path()

        if File.regular?(path) do
          check_version(
            path,
            configured_version(),
            "the installed #{path}",
            fn _ -> "run mix gate.install --force to install #{configured_version()} there" end
          )
        else
          {:missing, path}
        end
    end
  end

  @doc "`{:ok, version}` from the first line of `BIN --version` (`gate X.Y.Z`), or an error."
  def binary_version(path) do
    case System.cmd(path, ["--version"], stderr_to_stdout: true) do
      {out, 0} ->
        case Regex.run(~r/\Agate (\S+)/, out) do
          [_, v] ->
            {:ok, v}

          _ ->
            {:error, "#{path} --version says #{inspect(first_line(out))}, not \"gate VERSION\""}
        end

      {out, code} ->
        {:error, "#{path} --version exited #{code}: #{first_line(out)}"}
    end
  rescue
    e in ErlangError ->
      {:error, "#{path} cannot be run: #{explain_spawn(e.original)}"}
  end

  # an owner, group or other execute bit: what open_port's spawn_executable needs
  defp executable?(path) do
    case File.stat(path) do
      {:ok, %File.Stat{mode: mode}} -> Bitwise.band(mode, 0o111) != 0
      _ -> false
    end
  end

  # open_port's reasons (eacces, enoent, enoexec...) as words
  defp explain_spawn(reason) when is_atom(reason) do
    "#{:file.format_error(reason)} (#{reason})"
  end

  defp explain_spawn(reason), do: inspect(reason)

  defp first_line(text), do: text |> String.split("\n", parts: 2) |> hd() |> String.trim()

  defp check_version(path, want, what, fix) do
    case binary_version(path) do
      {:ok, ^want} ->
        {:ok, path}

      {:ok, other} ->
        {:error,
         "config :gate, version: #{inspect(want)}, but #{what} is gate #{other}: #{fix.(other)}"}

      {:error, msg} ->
        {:error, msg}
    end
  end

  @doc """
  Runs gate with `args` in the current directory with the VM's own stdin, stdout and stderr
  (gate colours a terminal and streams the suite's output as it runs) and returns its exit
  status, or `{:error, message}` when it cannot be started. SIGTERM sent to this VM is passed on to gate, which stops its node first; the VM
  waits for gate to exit, so nothing of gate's is left running after it. (Ctrl-C in a
  terminal halts this VM at once; gate, started with GATE_EXIT_WITH_PARENT=1, gets SIGTERM
  when the VM's erl_child_setup exits with it, and stops its node.)
  """
  def run(bin, args) do
    case open(bin, args) do
      {:ok, port} -> run_port(port)
      {:error, _} = error -> error
    end
  end

  # the port, or what stopped the spawn (not executable, not a binary of this machine)
  defp open(bin, args) do
    {:ok,
     Port.open({:spawn_executable, bin}, [
       :nouse_stdio,
       :exit_status,
       args: args,
       # gate gets SIGTERM when this VM is gone, however it went (Ctrl-C halts it at once)
       env: [{~c"GATE_EXIT_WITH_PARENT", ~c"1"}],
       cd: File.cwd!()
     ])}
  rescue
    e in ErlangError ->
      {:error, "#{bin} cannot be run: #{explain_spawn(e.original)}"}
  end

  defp run_port(port) do
    case Port.info(port, :os_pid) do
      {:os_pid, os_pid} ->
        forward_signals(os_pid)

        try do
          await(port)
        after
          restore_signals()
        end

      # gate has already exited (a refused option exits at once) and its port is closed:
      # its exit status is waiting in the mailbox, there is nothing to forward signals to
      nil ->
        await(port)
    end
  end

  defp await(port) do
    receive do
      {^port, {:exit_status, status}} -> status
      {^port, _other} -> await(port)
    end
  end

  # while gate runs, SIGTERM goes to gate instead of stopping this VM (OTP's
  # erl_signal_handler would init:stop/0 it, leaving gate behind): gate stops its node and
  # exits 143, and this VM exits with that. Gate.Signals stands in for erl_signal_handler.
  defp forward_signals(os_pid) do
    :ok =
      :gen_event.swap_handler(
        :erl_signal_server,
        {:erl_signal_handler, :swap},
        {Gate.Signals, os_pid}
      )
  end

  defp restore_signals do
    _ =
      :gen_event.swap_handler(
        :erl_signal_server,
        {Gate.Signals, :swap},
        {:erl_signal_handler, []}
      )

    :ok
  catch
    # the VM is already stopping: nothing to restore
    :exit, _ -> :ok
  end
end
