# integrations/mix/lib/gate/installer.ex: `mix gate.install`'s work: download
# gate-VERSION-TARGET and its .sha256 (:httpc; https verified against the system's CA
# certificates), check the checksum and that the binary runs and says its version, then move
# it into _build/gate-VERSION whole. Every refusal leaves nothing installed and names the URL.
defmodule Gate.Installer do
  @moduledoc false

  @doc """
  Installs gate `version` (default: the configured one) for this machine's target.
  Options: `:root` (default `_build`), `:base_url`, `:target`. Returns `{:ok, path}` or
  `{:error, message}`.
  """
  def install(opts \\ []) do
    version = Keyword.get(opts, :version, Gate.configured_version())
    root = Keyword.get(opts, :root, Gate.install_root())
    base = Keyword.get(opts, :base_url, Gate.base_url())

    with {:ok, target} <- target(opts),
         name = "gate-#{version}-#{target}",
         url = release_url(base, version, name),
         {:ok, body} <- fetch(url),
         {:ok, sums} <- fetch_checksum(url <> ".sha256"),
         {:ok, want} <- expected_sha256(sums, name, url <> ".sha256"),
         :ok <- verify(body, want, url) do
      place(body, version, root, url)
    end
  end

  defp target(opts) do
    case Keyword.fetch(opts, :target) do
      {:ok, t} -> {:ok, t}
      :error -> Gate.target()
    end
  end

  @doc "The binary's URL: the base URL template with `$version` replaced, then `/NAME`."
  def release_url(base, version, name) do
    String.trim_trailing(String.replace(base, "$version", version), "/") <> "/" <> name
  end

  @doc """
  The expected SHA-256 (lowercase hex) for `name` in a file of sha256sum's format
  (`HEX  NAME` or `HEX *NAME` per line).
  """
  def expected_sha256(text, name, where) do
    lines =
      text
      |> String.split(["\r\n", "\n"], trim: true)
      |> Enum.map(&Regex.run(~r/\A([0-9a-fA-F]{64}) [ *]?(.+?)\s*\z/, &1))

    case Enum.find(lines, &match?([_, _, ^name], &1)) do
      [_, hex, _] ->
        {:ok, String.downcase(hex)}

      nil ->
        {:error,
         "#{where} has no sha256sum line for #{name} (expected \"<64 hex digits>  #{name}\"): nothing installed"}
    end
  end

  defp verify(body, want, url) do
    got = :crypto.hash(:sha256, body) |> Base.encode16(case: :lower)

    if got == want do
      :ok
    else
      {:error,
       "checksum mismatch for #{url}: its .sha256 says #{want}, the download is #{got} (#{byte_size(body)} bytes): nothing installed"}
    end
  end

  # written beside its final place, run, then renamed into it: an interrupted or refused
  # install leaves no _build/gate-VERSION behind
  defp place(body, version, root, url) do
    dir = Path.join(root, "gate-#{version}")
    tmp = Path.join(root, ".gate-#{version}.#{System.unique_integer([:positive])}")
    bin = Path.join(tmp, "gate")

    result =
      with :ok <- File.mkdir_p(tmp),
           :ok <- File.write(bin, body),
           :ok <- File.chmod(bin, 0o755),
           {:ok, ^version} <- Gate.binary_version(bin) |> version_of(url, version),
           {:ok, _} <- File.rm_rf(dir),
           :ok <- File.rename(tmp, dir) do
        {:ok, Path.join(dir, "gate")}
      else
        {:error, msg} when is_binary(msg) ->
          {:error, msg}

        {:error, reason} ->
          {:error, "cannot install into #{dir}: #{:file.format_error(reason)}"}

        {:error, reason, path} ->
          {:error, "cannot replace #{path}: #{:file.format_error(reason)}"}
      end

    File.rm_rf(tmp)
    result
  end

  defp version_of({:ok, version}, _url, version), do: {:ok, version}

  defp version_of({:ok, other}, url, version) do
    {:error,
     "#{url} is gate #{other}, not #{version} (its --version): nothing installed; check config :gate, version: and base_url:"}
  end

  defp version_of({:error, msg}, url, _version) do
    {:error, "the binary downloaded from #{url} does not run here: #{msg}: nothing installed"}
  end

  # the .sha256 beside the binary: without it the download cannot be verified, so it is not
  # installed (the binary's own URL answered: a 404 here is a release published without it)
  defp fetch_checksum(url) do
    case fetch(url) do
      {:ok, _} = ok ->
        ok

      {:error, msg} ->
        {:error,
         msg <>
           "; without its .sha256 the download cannot be verified: nothing installed (publish the .sha256 beside the binary, as make release writes it)"}
    end
  end

  @doc "GETs `url` whole; `{:ok, body}` or `{:error, message naming the url}`."
  def fetch(url) do
    {:ok, _} = Application.ensure_all_started(:inets)
    {:ok, _} = Application.ensure_all_started(:ssl)
    set_proxies(url)

    case :httpc.request(:get, {String.to_charlist(url), []}, http_options(url),
           body_format: :binary
         ) do
      {:ok, {{_, 200, _}, _headers, body}} ->
        {:ok, body}

      {:ok, {{_, status, reason}, _headers, _body}} ->
        {:error,
         "cannot download #{url}: the server answered #{status} #{reason}" <> hint(status)}

      {:error, reason} ->
        {:error, "cannot download #{url}: #{explain(reason)}" <> offline_hint()}
    end
  end

  defp hint(404),
    do:
      " (is there a release for this version and target? check config :gate, version: and base_url:)"

  defp hint(_), do: ""

  defp offline_hint do
    "; without a network, set config :gate, path: to a gate binary on disk, or base_url: to a mirror you can reach"
  end

  defp explain({:failed_connect, details}) do
    case List.keyfind(details, :inet, 0) do
      {:inet, _, :econnrefused} -> "connection refused"
      {:inet, _, :nxdomain} -> "host not found (no DNS, or no network)"
      {:inet, _, :timeout} -> "connection timed out"
      {:inet, _, :ehostunreach} -> "host unreachable (no network)"
      {:inet, _, :enetunreach} -> "network unreachable"
      {:inet, _, other} -> "cannot connect (#{inspect(other)})"
      _ -> "cannot connect (#{inspect(details)})"
    end
  end

  defp explain(:timeout), do: "timed out"
  defp explain(other), do: inspect(other)

  defp http_options(url) do
    base = [timeout: 300_000, connect_timeout: 30_000, autoredirect: true]

    if String.starts_with?(url, "https:") do
      [{:ssl, ssl_options(url)} | base]
    else
      base
    end
  end

  defp ssl_options(url) do
    host = url |> URI.parse() |> Map.get(:host) |> to_charlist()

    [
      verify: :verify_peer,
      cacerts: :public_key.cacerts_get(),
      server_name_indication: host,
      depth: 4,
      customize_hostname_check: [match_fun: :public_key.pkix_verify_hostname_match_fun(:https)]
    ]
  end

  # HTTP_PROXY / HTTPS_PROXY (and lowercase), as curl and Hex honour them
  defp set_proxies(url) do
    scheme = if String.starts_with?(url, "https:"), do: :https_proxy, else: :proxy

    names =
      if scheme == :https_proxy, do: ~w(HTTPS_PROXY https_proxy), else: ~w(HTTP_PROXY http_proxy)

    case Enum.find_value(names, &System.get_env/1) do
      nil ->
        :ok

      proxy ->
        %URI{host: host, port: port} = URI.parse(proxy)

        no_proxy =
          (System.get_env("NO_PROXY") || System.get_env("no_proxy") || "")
          |> String.split(",", trim: true)

        :httpc.set_options([
          {scheme, {{to_charlist(host), port}, Enum.map(no_proxy, &to_charlist/1)}}
        ])
    end
  end
end
