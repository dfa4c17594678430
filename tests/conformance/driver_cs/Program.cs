// The C# SDK's driver for the client conformance suite
// (tests/conformance/conformance.py says the protocol): a fixed AI tick, B
// batches a tick over a stream or as unary calls, one JSON line per tick and
// per settled batch.
using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.Text.Json;
using System.Threading;
using System.Threading.Tasks;
using Utilityd.Client;
using Utilityd.V1;

var flags = new Dictionary<string, string>
{
    ["target"] = "", ["agents"] = "64", ["batches"] = "4", ["tick_ms"] = "100", ["ticks"] = "60", ["mode"] = "stream",
    // false: the first batches go out before any replica was asked whether
    // it serves (a game server that starts sending at once).
    ["wait_ready"] = "true",
};
foreach (var arg in args)
{
    var eq = arg.IndexOf('=');
    var name = arg.TrimStart('-');
    if (eq < 0 || !flags.ContainsKey(name.Substring(0, name.IndexOf('='))))
    {
        Console.Error.WriteLine($"unknown argument {arg}");
        return 2;
    }
    flags[name.Substring(0, name.IndexOf('='))] = arg.Substring(eq + 1);
}
// As a game server would (client_sdk/csharp/README.md, "Threads"): on 2
// cores the pool starts with 2 threads, and a burst of continuations from
// a fault's re-sends must not wait for it to grow.
ThreadPool.SetMinThreads(8, 8);
var agents = int.Parse(flags["agents"]);
var batches = int.Parse(flags["batches"]);
var tick = TimeSpan.FromMilliseconds(int.Parse(flags["tick_ms"]));
var ticks = int.Parse(flags["ticks"]);
var streamed = flags["mode"] == "stream";

// Lines go out from a thread of their own: a write to a pipe the suite is
// slow to read blocks, and must not block the thread pool the SDK's
// continuations run on (a blocked pool grows by a thread every half second).
var lines = new BlockingCollection<byte[]>();
var writer = new Thread(() =>
{
    using var output = Console.OpenStandardOutput();
    foreach (var line in lines.GetConsumingEnumerable())
    {
        output.Write(line);
        output.WriteByte((byte)'\n');
        if (lines.Count == 0) output.Flush();
    }
    output.Flush();
}) { IsBackground = false, Name = "stdout" };
writer.Start();
void Emit(Dictionary<string, object> line) => lines.Add(JsonSerializer.SerializeToUtf8Bytes(line));
double NowMs() => (DateTime.UtcNow - DateTime.UnixEpoch).TotalMilliseconds;

DecideRequest Batch(int slot, int t)
{
    var req = new DecideRequest();
    for (var a = slot; a < agents; a += batches)
    {
        var s = new AgentSnapshot { AgentId = $"forager-{a}", BehaviourSet = "eat_hide_wander" };
        s.NamedFactors["hunger"] = (a * 7 + t) % 100 / 100f;
        s.NamedFactors["danger"] = (a * 3 + t) % 50 / 100f;
        s.NamedFactors["food_distance"] = a % 25;
        s.NamedFactors["idle_time"] = t % 20;
        req.Agents.Add(s);
    }
    return req;
}

UtilitydClient client;
try
{
    client = UtilitydClient.Connect(new ClientOptions { Target = flags["target"], AiTick = tick });
    using var ready = new CancellationTokenSource(TimeSpan.FromSeconds(10));
    if (flags["wait_ready"] != "false") await client.WaitForReadyAsync(ready.Token);
    // Warm the schema cache, as a game server does at start.
    await client.GetSchemaAsync("eat_hide_wander");
}
catch (UtilitydException e)
{
    Console.Error.WriteLine(e.Message);
    lines.CompleteAdding();
    return 2;
}
await using (client)
{
    var stream = streamed ? client.OpenStream(new StreamOptions { MaxInFlight = 1024 }) : null;
    // Warm up as a game server does before its first tick: .NET compiles
    // each method on first use, and the first batch would pay for it. The
    // id is one the run never uses.
    var warm = Batch(0, 0);
    warm.RequestId = 1UL << 40;
    try
    {
        if (stream != null) await stream.DecideAsync(warm);
        else await client.DecideAsync(warm);
    }
    catch (UtilitydException)
    {
        // Warm all the same (every replica refusing is a scenario).
    }
    var running = new List<Task>();
    var start = Stopwatch.StartNew();
    ulong id = 1;
    for (var t = 0; t < ticks; t++)
    {
        var wait = tick * t - start.Elapsed;
        if (wait > TimeSpan.Zero) await Task.Delay(wait);
        Emit(new Dictionary<string, object> { ["tick"] = t, ["at"] = NowMs() });
        for (var s = 0; s < batches; s++)
        {
            var req = Batch(s, t);
            req.RequestId = id;
            running.Add(Run(id++, t, s, req));
        }
    }
    await Task.WhenAll(running);
    if (stream != null)
    {
        using var closing = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        await stream.CloseAsync(closing.Token);
    }
    Emit(new Dictionary<string, object> { ["end"] = true });
    lines.CompleteAdding();
    writer.Join();

    async Task Run(ulong batchId, int t, int slot, DecideRequest req)
    {
        var sent = NowMs();
        var info = new CallInfo();
        string? error = null;
        try
        {
            if (stream != null) await stream.DecideAsync(req, default, info);
            else await client.DecideAsync(req, default, info);
        }
        catch (UtilitydException e)
        {
            error = e.ToString();
        }
        var line = new Dictionary<string, object>
        {
            ["batch"] = batchId, ["tick"] = t, ["slot"] = slot, ["sent"] = sent, ["done"] = NowMs(), ["ok"] = error == null,
            ["attempts"] = info.Attempts, ["replica"] = info.Replica,
        };
        if (error != null) line["error"] = error;
        Emit(line);
    }
}
return 0;
