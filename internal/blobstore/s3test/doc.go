// Package s3test gives tests a real S3-compatible server: versitygw, run
// as a child process in its posix mode on a free loopback port, with a
// bucket made for the test and random credentials. In posix mode a bucket
// is a directory of the server's root and an object a file in it (its key
// the file's path below the bucket), so a test can see, damage or remove
// the bytes behind an object as a failing disk would (ObjectPath).
//
// It does not install versitygw: `make test` does (the s3server target),
// and a machine without it fails the tests that need it with a message
// saying so. It is not imported by genform itself, only by tests.
package s3test
