package winapi

import (
	"slices"
	"testing"
)

// The methods of the interfaces bound here, in the order their headers
// declare them (unknwn.h, oaidl.h, taskschd.h): a method's vtable index is
// its place in its interface's list.
var (
	iunknownMethods  = []string{"QueryInterface", "AddRef", "Release"}
	idispatchMethods = append(slices.Clip(iunknownMethods), "GetTypeInfoCount", "GetTypeInfo", "GetIDsOfNames", "Invoke")
	vtableOrder      = map[string][]string{
		"IUnknown": iunknownMethods,
		"ITaskService": append(slices.Clip(idispatchMethods),
			"GetFolder", "GetRunningTasks", "NewTask", "Connect", "get_Connected",
			"get_TargetServer", "get_ConnectedUser", "get_ConnectedDomain", "get_HighestVersion"),
		"ITaskFolder": append(slices.Clip(idispatchMethods),
			"get_Name", "get_Path", "GetFolder", "GetFolders", "CreateFolder", "DeleteFolder",
			"GetTask", "GetTasks", "DeleteTask", "RegisterTask", "RegisterTaskDefinition",
			"GetSecurityDescriptor", "SetSecurityDescriptor"),
		"IRegisteredTask": append(slices.Clip(idispatchMethods),
			"get_Name", "get_Path", "get_State", "get_Enabled", "put_Enabled", "Run", "RunEx",
			"GetInstances", "get_LastRunTime", "get_LastTaskResult", "get_NumberOfMissedRuns",
			"get_NextRunTime", "get_Definition", "get_Xml", "GetSecurityDescriptor",
			"SetSecurityDescriptor", "Stop", "GetRunTimes"),
	}
)

// TestVtableIndexes holds each vtable index the COM calls use, written by
// hand, to its method's place in the headers' order.
func TestVtableIndexes(t *testing.T) {
	for _, tt := range []struct {
		iface, method string
		index         int
	}{
		{"IUnknown", "Release", vtblRelease},
		{"ITaskService", "GetFolder", vtblTaskServiceGetFolder},
		{"ITaskService", "Connect", vtblTaskServiceConnect},
		{"ITaskFolder", "GetTask", vtblTaskFolderGetTask},
		{"ITaskFolder", "DeleteTask", vtblTaskFolderDeleteTask},
		{"ITaskFolder", "RegisterTask", vtblTaskFolderRegisterTask},
		{"IRegisteredTask", "Run", vtblRegisteredTaskRun},
		{"IRegisteredTask", "get_Xml", vtblRegisteredTaskGetXML},
		{"IRegisteredTask", "Stop", vtblRegisteredTaskStop},
	} {
		methods := vtableOrder[tt.iface]
		if want := slices.Index(methods, tt.method); tt.index != want {
			t.Errorf("%s::%s is at vtable index %d, the code calls %d", tt.iface, tt.method, want, tt.index)
		}
		if len(methods) > len(comObject{}.vtbl) {
			t.Errorf("%s has %d methods, more than comObject's vtable holds", tt.iface, len(methods))
		}
	}
}
