using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Utilityd.Client;
using Utilityd.V1;

namespace GameLoop
{
    /// <summary>One non-player character and what it remembers.</summary>
    public sealed class Npc
    {
        public Npc(string id, string set, Dictionary<string, float> needs)
        {
            Id = id;
            Set = set;
            Needs = needs;
        }

        public string Id { get; }
        /// <summary>Its behaviour set.</summary>
        public string Set { get; }
        /// <summary>What it does now: kept when a tick gets no answer.</summary>
        public string Action { get; set; } = "";
        /// <summary>The tick its last decision was asked for (-1: none yet).</summary>
        public int Fresh { get; set; } = -1;
        public Dictionary<string, float> Needs { get; }
        /// <summary>Why its last decision failed ("" when it did not).</summary>
        public string LastError { get; set; } = "";
    }

    /// <summary>
    /// What a Photon room, a Mirror or FishNet server, or a MagicOnion
    /// hub does with utilityd on its fixed tick: the loop never waits for
    /// the service. Each tick it applies the answer that arrived since the
    /// last one, then sends every NPC in one batch, with a deadline of one
    /// tick, when no call is in flight. An NPC whose tick got no answer
    /// keeps its last action.
    /// </summary>
    public sealed class NpcLoop
    {
        private readonly UtilitydClient _client;
        private Task<DecideResponse>? _inFlight;
        private int _inFlightTick;

        public NpcLoop(UtilitydClient client, int foragers, int villagers, TimeSpan tick)
        {
            _client = client;
            Tick = tick;
            for (var i = 0; i < foragers; i++)
            {
                Npcs.Add(new Npc($"forager-{i}", "eat_hide_wander", new Dictionary<string, float>
                {
                    ["hunger"] = i % 10 / 10f, ["danger"] = i % 3 / 10f, ["food_distance"] = i % 20, ["idle_time"] = 0,
                }));
            }
            for (var i = 0; i < villagers; i++)
            {
                Npcs.Add(new Npc($"villager-{i}", "villager_needs", new Dictionary<string, float>
                {
                    ["hunger"] = 0.5f, ["tiredness"] = i % 10 / 10f, ["loneliness"] = 0.3f, ["boredom"] = 0.2f,
                    ["food_distance"] = 5, ["bed_distance"] = 3, ["friend_distance"] = 8, ["toy_distance"] = 2,
                }));
            }
        }

        public List<Npc> Npcs { get; } = new List<Npc>();
        public TimeSpan Tick { get; }
        /// <summary>Ticks whose call failed (the NPCs went on with their
        /// last actions).</summary>
        public int Errors { get; private set; }
        /// <summary>Ticks that sent nothing because the last call was still
        /// in flight.</summary>
        public int Skipped { get; private set; }
        /// <summary>Why the last failed call failed.</summary>
        public string LastError { get; private set; } = "";

        /// <summary>One tick of the server's loop; never blocks.</summary>
        public void Step(int tick)
        {
            Apply();
            foreach (var n in Npcs)
            {
                n.Needs["hunger"] = Math.Clamp(n.Needs["hunger"] + 0.01f, 0, 1);
                if (n.Needs.ContainsKey("idle_time")) n.Needs["idle_time"] = tick % 20;
            }
            if (_inFlight != null)
            {
                Skipped++;
                return;
            }
            var batch = new DecideRequest();
            foreach (var n in Npcs)
            {
                var s = new AgentSnapshot { AgentId = n.Id, BehaviourSet = n.Set, CurrentAction = n.Action, Seed = (ulong)tick };
                s.NamedFactors.Add(n.Needs);
                batch.Agents.Add(s);
            }
            _inFlightTick = tick;
            _inFlight = DecideWithin(batch, Tick);
        }

        private async Task<DecideResponse> DecideWithin(DecideRequest batch, TimeSpan deadline)
        {
            using var cts = new CancellationTokenSource(deadline);
            return await _client.DecideAsync(batch, cts.Token).ConfigureAwait(false);
        }

        /// <summary>Applies the answer in flight if it has arrived.</summary>
        private void Apply()
        {
            if (_inFlight == null || !_inFlight.IsCompleted) return;
            var done = _inFlight;
            _inFlight = null;
            if (!done.IsCompletedSuccessfully)
            {
                LastError = done.Exception?.InnerException?.Message ?? "cancelled";
                Errors++; // the NPCs keep their last actions
                return;
            }
            var decisions = done.Result.Decisions;
            for (var i = 0; i < decisions.Count && i < Npcs.Count; i++)
            {
                var d = decisions[i];
                var n = Npcs[i];
                n.LastError = d.Error?.Message ?? "";
                if (d.Error != null) continue;
                n.Action = d.Action;
                n.Fresh = _inFlightTick;
                if (n.Action == "eat") n.Needs["hunger"] = Math.Clamp(n.Needs["hunger"] - 0.2f, 0, 1);
            }
        }

        /// <summary>Runs <paramref name="ticks"/> ticks at the loop's rate, as
        /// the server's tick thread would; <paramref name="before"/> lets a
        /// test act before each tick.</summary>
        public async Task RunAsync(int ticks, Action<int>? before = null, CancellationToken ct = default)
        {
            var start = System.Diagnostics.Stopwatch.StartNew();
            for (var t = 0; t < ticks && !ct.IsCancellationRequested; t++)
            {
                var wait = Tick * t - start.Elapsed;
                if (wait > TimeSpan.Zero) await Task.Delay(wait, ct).ConfigureAwait(false);
                before?.Invoke(t);
                Step(t);
            }
            if (_inFlight != null)
            {
                try
                {
                    await _inFlight.ConfigureAwait(false);
                }
                catch (UtilitydException)
                {
                }
                Apply();
            }
        }
    }
}
