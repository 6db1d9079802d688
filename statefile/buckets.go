package statefile

// Bucket and key names of the layout drawn in the package documentation.
// They are part of the on-disk format: changing one is a schema change and
// needs a migration.
var (
	// bucketRoot is the root of the layout as drawn: the bbolt file nests
	// the buckets below in a bucket of this name (package boltstate), and
	// messages about a missing bucket name them under it.
	bucketRoot = []byte("genform")
	// bucketMeta holds the file's identity and version under the key*
	// names below.
	bucketMeta = []byte("meta")
	// bucketResources maps a resource address to its resource record.
	bucketResources = []byte("resources")
	// bucketIntents maps an address to the intent record of a submission in
	// flight.
	bucketIntents = []byte("intents")
	// bucketProtections maps an address to its protection record; an
	// address without one is not protected.
	bucketProtections = []byte("protections")
	// bucketHistory maps a generation's fingerprint and id (historyKey) to
	// the record of the generation as it was last recorded (schema 2 on).
	bucketHistory = []byte("history")

	// keySchemaVersion is the layout version, in decimal.
	keySchemaVersion = []byte("schema_version")
	// keyLineage is the random identity given to the file at creation.
	keyLineage = []byte("lineage")
	// keySerial counts committed changes, in decimal.
	keySerial = []byte("serial")
	// keyService names the service the state's generations are made with
	// (see Tx.SetService); a file without it has not said yet.
	keyService = []byte("service")
	// keyRunStart is the serial before the first change of the last
	// command that changed the state (see Meta.RunStart), in decimal.
	keyRunStart = []byte("run_start")
	// keySpent is what the state's workspace spent on generations, by
	// currency (see Meta.Spent), as a JSON object of millionths.
	keySpent = []byte("spent")
)
