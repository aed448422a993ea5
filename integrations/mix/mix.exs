# integrations/mix/mix.exs: the Mix package `gate` (Hex): `mix gate` runs gate on the
# project, `mix gate.install` fetches and verifies the release binary. Only OTP's and
# Elixir's own modules (:httpc, :ssl, :public_key, :crypto): no Hex dependency, at run time
# or to compile.
defmodule Gate.MixProject do
  use Mix.Project

  # gate's version, written once: VERSION beside this file, which the repository's root
  # links to (the Hex package and a sparse git dependency hold this directory only). It is
  # also the gate release this package installs by default.
  @version __DIR__ |> Path.join("VERSION") |> File.read!() |> String.trim()
  @source_url "https://github.com/YOUR-ORG/gate"

  def project do
    [
      app: :gate,
      version: @version,
      elixir: "~> 1.14",
      start_permanent: false,
      deps: deps(),
      description:
        "Runs gate, the memory quality gate for Elixir test suites, on a Mix project: " <>
          "mix gate.install fetches the release binary (SHA-256 verified), mix gate runs it.",
      package: package(),
      name: "gate",
      source_url: @source_url,
      homepage_url: @source_url,
      docs: docs()
    ]
  end

  def application do
    [extra_applications: [:logger, :inets, :ssl, :public_key, :crypto]]
  end

  # ex_doc in MIX_ENV=docs only (MIX_ENV=docs mix do deps.get + docs): mix test, mix compile
  # and every project that depends on gate (which loads it in :prod) never see it, so none
  # of them needs Hex or a network; `only: :docs` keeps it out of the Hex package's
  # requirements.
  defp deps do
    if Mix.env() == :docs,
      do: [{:ex_doc, "~> 0.34", only: :docs, runtime: false}],
      else: []
  end

  defp package do
    [
      licenses: ["MIT"],
      links: %{
        "GitHub" => @source_url,
        "gate's README" => "#{@source_url}#readme",
        "Changelog" => "#{@source_url}/blob/main/CHANGELOG.md"
      },
      files: ~w(lib mix.exs VERSION README.md LICENSE .formatter.exs)
    ]
  end

  # HexDocs: the README first, then the modules (Gate) and the Mix tasks; source links point
  # into the package's directory of the release tag
  defp docs do
    [
      main: "readme",
      extras: ["README.md"],
      source_ref: "v#{@version}",
      source_url_pattern: "#{@source_url}/blob/v#{@version}/integrations/mix/%{path}#L%{line}"
    ]
  end
end
