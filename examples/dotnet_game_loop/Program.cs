// A fixed-tick game-server loop deciding 30 NPCs of two behaviour sets:
//   dotnet run -- 127.0.0.1:50051 [ticks]
using System;
using System.Linq;
using System.Threading;
using GameLoop;
using Utilityd.Client;

var target = args.Length > 0 ? args[0] : "127.0.0.1:50051";
var ticks = args.Length > 1 ? int.Parse(args[1]) : 50;
var tick = TimeSpan.FromMilliseconds(100);
await using var client = UtilitydClient.Connect(new ClientOptions { Target = target, AiTick = tick });
using (var ready = new CancellationTokenSource(TimeSpan.FromSeconds(5)))
{
    await client.WaitForReadyAsync(ready.Token);
}
var loop = new NpcLoop(client, foragers: 20, villagers: 10, tick);
await loop.RunAsync(ticks);
foreach (var group in loop.Npcs.GroupBy(n => n.Action).OrderBy(g => g.Key))
{
    Console.WriteLine($"{group.Key,-10} {group.Count()} NPCs");
}
Console.WriteLine($"{ticks} ticks, {loop.Errors} without an answer, {loop.Skipped} with a call still in flight");
