// Package utilityd is the Go client of utilityd, the utility-AI decision
// service for game servers: it connects to every replica of a target,
// packs named factors into each behaviour set's order, and decides batches
// of agents by unary calls or over a stream, keeping the client contract
// of docs/CLIENTS.md: a deadline per attempt (half the AI tick), a batch
// past it raced on another replica with the first answer winning, a
// replica that missed one avoided until a health probe answers, retries
// after overload only when the replica's hint has passed and within a
// retry budget, and exactly one result per batch.
//
//	client, err := utilityd.Connect(utilityd.Options{Target: "10.0.0.5:50051,10.0.0.6:50051"})
//	if err != nil { ... }
//	defer client.Close()
//	resp, err := client.Decide(ctx, &pb.DecideRequest{Agents: agents})
//
// The generated messages are in the utilitydv1 package (proto/utilitydv1).
package utilityd
