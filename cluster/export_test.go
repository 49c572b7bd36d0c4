package cluster

// RaceEnabled tells the external tests (package cluster_test) whether
// they run under -race.
const RaceEnabled = raceEnabled
