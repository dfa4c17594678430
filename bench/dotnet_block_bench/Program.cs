// One block of --rows foragers a batch, one at a time on a DecisionStream, as
// bench/sdk_stream_bench.cc --block_rows sends it: decisions/s, bytes the
// whole process allocated per batch (GC.GetTotalAllocatedBytes, every
// thread) and bytes the calling thread allocated writing and reading the
// block (GC.GetAllocatedBytesForCurrentThread), as one JSON line.
//   dotnet_block_bench --target=H:P [--rows=1024] [--seconds=5] [--warmup=1]
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Text.Json;
using Utilityd.Client;
using Utilityd.V1;

var flags = args.Select(a => a.TrimStart('-').Split('=', 2)).ToDictionary(p => p[0], p => p.Length > 1 ? p[1] : "");
var target = flags.GetValueOrDefault("target", "127.0.0.1:50051");
var rows = int.Parse(flags.GetValueOrDefault("rows", "1024"));
var seconds = double.Parse(flags.GetValueOrDefault("seconds", "5"));
var warmup = double.Parse(flags.GetValueOrDefault("warmup", "1"));

var ids = new ulong[rows];
var factors = new float[4 * rows];
for (var r = 0; r < rows; r++)
{
    ids[r] = (ulong)(1000 + r);
    factors[0 * rows + r] = r % 10 / 10f;
    factors[1 * rows + r] = r % 7 / 10f;
    factors[2 * rows + r] = r % 25;
    factors[3 * rows + r] = r % 20;
}
var columns = new BlockColumns
{
    BehaviourSet = "eat_hide_wander", AgentIds = ids, Factors = factors, Layout = FactorLayout.Columns,
};
var next = new int[rows];
var errors = new List<RowError>();
await using var client = UtilitydClient.Connect(new ClientOptions { Target = target });
await client.WaitForReadyAsync();
await using var stream = client.OpenStream();
var request = new DecideRequest();
var block = new AgentBlock();
request.Blocks.Add(block);

long batches = 0, failed = 0, processBytes = 0, threadBytes = 0;
var clock = Stopwatch.StartNew();
var measureFrom = TimeSpan.FromSeconds(warmup);
var end = measureFrom + TimeSpan.FromSeconds(seconds);
TimeSpan started = default;
var measuring = false;
while (clock.Elapsed < end)
{
    if (!measuring && clock.Elapsed >= measureFrom)
    {
        measuring = true;
        started = clock.Elapsed;
        processBytes = GC.GetTotalAllocatedBytes(true);
    }
    var before = GC.GetAllocatedBytesForCurrentThread();
    Blocks.Write(columns, block);
    var mine = GC.GetAllocatedBytesForCurrentThread() - before;
    try
    {
        var response = await stream.DecideAsync(request);
        before = GC.GetAllocatedBytesForCurrentThread();
        Blocks.Read(response.Blocks[0], rows, new BlockAnswers { ActionIndex = next }, errors);
        mine += GC.GetAllocatedBytesForCurrentThread() - before;
    }
    catch (UtilitydException)
    {
        failed++;
    }
    if (measuring)
    {
        batches++;
        threadBytes += mine;
    }
}
var elapsed = (clock.Elapsed - started).TotalSeconds;
processBytes = GC.GetTotalAllocatedBytes(true) - processBytes;
Console.WriteLine(JsonSerializer.Serialize(new Dictionary<string, object>
{
    ["label"] = "csharp", ["block_rows"] = rows, ["batches_per_second"] = Math.Round(batches / elapsed, 1),
    ["decisions_per_second"] = Math.Round(batches * rows / elapsed),
    ["bytes_per_batch"] = batches > 0 ? Math.Round((double)processBytes / batches) : 0,
    ["game_thread_bytes_per_batch"] = batches > 0 ? Math.Round((double)threadBytes / batches, 1) : 0,
    ["failed"] = failed,
}));
return failed == 0 && batches > 0 ? 0 : 1;
