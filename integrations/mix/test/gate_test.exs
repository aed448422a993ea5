# integrations/mix/test/gate_test.exs: the package's own tests: targets, checksum files, and
# mix gate.install's downloads served by a real HTTP server (OTP's httpd) on a random
# loopback port: installed, refused on a checksum or version mismatch (nothing left), a
# missing release and an unreachable server named by URL; config :gate, path: and version:;
# the version, read from VERSION.
defmodule GateTest do
  use ExUnit.Case, async: false

  @name "gate-9.9.9-linux-x86_64"

  setup do
    tmp = Path.join(System.tmp_dir!(), "gate-mix-test-#{System.unique_integer([:positive])}")
    docroot = Path.join(tmp, "www/v9.9.9")
    File.mkdir_p!(docroot)
    File.mkdir_p!(Path.join(tmp, "root"))
    {:ok, _} = Application.ensure_all_started(:inets)

    {:ok, pid} =
      :inets.start(:httpd,
        port: 0,
        server_name: ~c"gate-test",
        server_root: String.to_charlist(tmp),
        document_root: String.to_charlist(Path.join(tmp, "www")),
        bind_address: {127, 0, 0, 1}
      )

    port = :httpd.info(pid)[:port]

    on_exit(fn ->
      :inets.stop(:httpd, pid)
      File.rm_rf!(tmp)
      for k <- [:path, :version, :base_url], do: Application.delete_env(:gate, k)
    end)

    %{
      tmp: tmp,
      docroot: docroot,
      root: Path.join(tmp, "root"),
      base: "http://127.0.0.1:#{port}/v$version"
    }
  end

  # a release "binary" that answers --version as gate does, and its sha256sum line
  defp publish(docroot, says, opts \\ []) do
    body = "#!/bin/sh\necho 'gate #{says}'\necho 'build: test'\n"
    File.write!(Path.join(docroot, @name), body)
    sum = :crypto.hash(:sha256, Keyword.get(opts, :sum_of, body)) |> Base.encode16(case: :lower)
    File.write!(Path.join(docroot, @name <> ".sha256"), "#{sum}  #{@name}\n")
  end

  defp install(ctx, opts \\ []) do
    [version: "9.9.9", root: ctx.root, base_url: ctx.base, target: "linux-x86_64"]
    |> Keyword.merge(opts)
    |> Gate.Installer.install()
  end

  test "targets: linux on x86_64 and aarch64 with glibc; musl and other systems are refused" do
    assert Gate.target("x86_64-pc-linux-gnu") == {:ok, "linux-x86_64"}
    assert Gate.target("aarch64-unknown-linux-gnu") == {:ok, "linux-aarch64"}
    assert {:error, msg} = Gate.target("x86_64-alpine-linux-musl")
    assert msg =~ "musl"
    assert {:error, msg} = Gate.target("x86_64-apple-darwin23.1.0")
    assert msg =~ "no release binary for x86_64-apple-darwin23.1.0"
    assert {:error, _} = Gate.target("riscv64-unknown-linux-gnu")
  end

  test "checksum files in sha256sum's format" do
    hex = String.duplicate("ab", 32)
    assert Gate.Installer.expected_sha256("#{hex}  #{@name}\n", @name, "u") == {:ok, hex}

    assert Gate.Installer.expected_sha256("#{String.upcase(hex)} *#{@name}\r\n", @name, "u") ==
             {:ok, hex}

    other = "#{String.duplicate("cd", 32)}  gate-9.9.9-linux-aarch64\n"
    assert Gate.Installer.expected_sha256(other <> "#{hex}  #{@name}\n", @name, "u") == {:ok, hex}
    assert {:error, msg} = Gate.Installer.expected_sha256(other, @name, "http://x/y.sha256")
    assert msg =~ "http://x/y.sha256 has no sha256sum line for #{@name}"
    assert {:error, _} = Gate.Installer.expected_sha256("abc  #{@name}\n", @name, "u")
  end

  test "the URL template: $version replaced, the name appended" do
    assert Gate.Installer.release_url(
             "https://h/d/v$version/",
             "1.2.3",
             "gate-1.2.3-linux-x86_64"
           ) ==
             "https://h/d/v1.2.3/gate-1.2.3-linux-x86_64"
  end

  test "installs a verified binary under ROOT/gate-VERSION", ctx do
    publish(ctx.docroot, "9.9.9")
    assert {:ok, path} = install(ctx)
    assert path == Path.join([ctx.root, "gate-9.9.9", "gate"])
    assert {out, 0} = System.cmd(path, ["--version"])
    assert out =~ "gate 9.9.9"
    assert File.ls!(ctx.root) == ["gate-9.9.9"]
    # again: replaced whole
    assert {:ok, ^path} = install(ctx)
    assert File.ls!(ctx.root) == ["gate-9.9.9"]
  end

  test "a checksum mismatch installs nothing and says so", ctx do
    publish(ctx.docroot, "9.9.9", sum_of: "something else")
    assert {:error, msg} = install(ctx)
    assert msg =~ "checksum mismatch for http://127.0.0.1:"
    assert msg =~ "/v9.9.9/#{@name}"
    assert msg =~ "nothing installed"
    assert File.ls!(ctx.root) == []
  end

  test "a binary that reports another version installs nothing", ctx do
    publish(ctx.docroot, "9.9.8")
    assert {:error, msg} = install(ctx)
    assert msg =~ "is gate 9.9.8, not 9.9.9"
    assert File.ls!(ctx.root) == []
  end

  test "no release for the version: the URL and the server's answer", ctx do
    assert {:error, msg} = install(ctx, version: "0.0.1")
    assert msg =~ "cannot download http://127.0.0.1:"
    assert msg =~ "/v0.0.1/gate-0.0.1-linux-x86_64: the server answered 404"
    assert File.ls!(ctx.root) == []
  end

  test "a release without its .sha256 installs nothing and says why", ctx do
    publish(ctx.docroot, "9.9.9")
    File.rm!(Path.join(ctx.docroot, @name <> ".sha256"))
    assert {:error, msg} = install(ctx)
    assert msg =~ "cannot download http://127.0.0.1:"
    assert msg =~ "/v9.9.9/#{@name}.sha256: the server answered 404"
    assert msg =~ "cannot be verified: nothing installed"
    assert File.ls!(ctx.root) == []
  end

  test "an unreachable server: a clear message naming the URL", ctx do
    # a port nothing listens on: bound, then closed
    {:ok, sock} = :gen_tcp.listen(0, ip: {127, 0, 0, 1})
    {:ok, port} = :inet.port(sock)
    :ok = :gen_tcp.close(sock)
    base = "http://127.0.0.1:#{port}/v$version"
    assert {:error, msg} = install(ctx, base_url: base)
    assert msg =~ "cannot download http://127.0.0.1:#{port}/v9.9.9/#{@name}: connection refused"
    assert msg =~ "config :gate, path:"
    assert File.ls!(ctx.root) == []
  end

  test "config :gate, path: is used as it is; a pinned version it does not report is an error",
       ctx do
    publish(ctx.docroot, "9.9.9")
    bin = Path.join(ctx.docroot, @name)
    File.chmod!(bin, 0o755)
    Application.put_env(:gate, :path, bin)
    assert Gate.bin_path() == {:ok, bin}
    Application.put_env(:gate, :version, "9.9.9")
    assert Gate.bin_path() == {:ok, bin}
    Application.put_env(:gate, :version, "1.0.0")
    assert {:error, msg} = Gate.bin_path()
    assert msg =~ ~s(config :gate, version: "1.0.0", but config :gate, path: #{bin} is gate 9.9.9)
    assert msg =~ ~s(put that version there, or set version: "9.9.9")
    Application.put_env(:gate, :path, Path.join(ctx.tmp, "nowhere"))
    assert {:error, msg} = Gate.bin_path()
    assert msg =~ "no such file"
  end

  test "config :gate, path: that is a directory or not executable: an error, never a crash",
       ctx do
    Application.put_env(:gate, :path, ctx.tmp)
    assert {:error, msg} = Gate.bin_path()
    assert msg =~ "config :gate, path: #{ctx.tmp} is not a file"
    publish(ctx.docroot, "9.9.9")
    bin = Path.join(ctx.docroot, @name)
    File.chmod!(bin, 0o644)
    Application.put_env(:gate, :path, bin)
    assert {:error, msg} = Gate.bin_path()
    assert msg =~ "config :gate, path: #{bin} is not executable: chmod +x #{bin}"
    # and Gate.run of a file that cannot be spawned says so instead of raising
    assert {:error, msg} = Gate.run(bin, ["--version"])
    assert msg =~ "#{bin} cannot be run: "
  end

  test "an installed binary of another version: mix gate.install --force is the fix", ctx do
    publish(ctx.docroot, "9.9.8")
    dir = Path.join(Gate.install_root(), "gate-9.9.9")
    File.mkdir_p!(dir)
    File.cp!(Path.join(ctx.docroot, @name), Path.join(dir, "gate"))
    File.chmod!(Path.join(dir, "gate"), 0o755)
    Application.put_env(:gate, :version, "9.9.9")
    on_exit(fn -> File.rm_rf!(dir) end)
    assert {:error, msg} = Gate.bin_path()
    assert msg =~ "the installed #{Path.join(dir, "gate")} is gate 9.9.8"
    assert msg =~ "run mix gate.install --force to install 9.9.9 there"
    refute msg =~ "set version:"
  end

  test "mix gate's arguments: gate's commands pass through, anything else is gate run" do
    args = &Mix.Tasks.Gate.gate_args/1
    assert args.([]) == ["run"]
    assert args.(["-q"]) == ["run", "-q"]
    assert args.(["--", "--include", "leak"]) == ["run", "--", "--include", "leak"]
    assert args.(["test/foo_test.exs"]) == ["run", "test/foo_test.exs"]
    assert args.(["merge", "r1.json", "r2.json"]) == ["merge", "r1.json", "r2.json"]
    assert args.(["snapshot", "--help"]) == ["snapshot", "--help"]
    assert args.(["--version"]) == ["--version"]
    assert args.(["run", "-q"]) == ["run", "-q"]
  end

  test "the package's version is gate's: VERSION, the one place it is written" do
    version = File.read!(Path.expand("../VERSION", __DIR__)) |> String.trim()
    assert version =~ ~r/\A\d+\.\d+\.\d+\z/
    assert Mix.Project.config()[:version] == version
    assert Gate.default_version() == version

    assert Gate.requirement() ==
             "~> " <> (version |> String.split(".") |> Enum.take(2) |> Enum.join("."))

    # in gate's repository, the root's VERSION (read by the C build) is this file
    root = Path.expand("../../../VERSION", __DIR__)

    if File.exists?(root),
      do: assert(File.read!(root) == File.read!(Path.expand("../VERSION", __DIR__)))
  end

  test "the package carries its licence: LICENSE, the MIT text naming the gate authors" do
    package = Mix.Project.config()[:package]
    assert package[:licenses] == ["MIT"]
    assert "LICENSE" in package[:files]
    text = File.read!(Path.expand("../LICENSE", __DIR__))
    assert text =~ ~r/\AMIT License\n\nCopyright \(c\) \d{4} the gate authors\n/

    # in gate's repository, the root's LICENSE is the same text
    root = Path.expand("../../../LICENSE", __DIR__)
    if File.exists?(root), do: assert(File.read!(root) == text)
  end
end
