package rdb_test

import (
	"testing"

	"github.com/agora/agora/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }
