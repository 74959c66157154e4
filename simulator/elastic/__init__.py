"""ElastiSim inputs, its flow-level execution model and its scheduling interface, run inside cosched
(seed 001)."""
