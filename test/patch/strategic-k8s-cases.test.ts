// Test tables of Kubernetes' strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch/
// patch_test.go, Apache-2.0, The Kubernetes Authors): the inputs and the expected patches and results
// of its TestStrategicMergePatch, TestCustomStrategicMergePatch and TestReplaceWithRawExtension,
// converted from YAML to JSON. Data only: strategic-k8s.test.ts runs them against our code with a
// declaration of their MergeItem type. Regenerate rather than edit by hand.
/* eslint-disable */
export interface K8sCase {
  description: string;
  original?: any;
  modified?: any;
  current?: any;
  twoWay?: any;
  threeWay?: any;
  result?: any;
  twoWayResult?: any;
  expectedError?: string;
}

export const createCases: K8sCase[] = [
 {
  "description": "nil original",
  "twoWay": {
   "name": 1,
   "value": 1
  },
  "modified": {
   "name": 1,
   "value": 1
  },
  "current": {
   "name": 1,
   "other": "a"
  },
  "threeWay": {
   "value": 1
  },
  "result": {
   "name": 1,
   "value": 1,
   "other": "a"
  }
 },
 {
  "description": "nil patch",
  "original": {
   "name": 1
  },
  "twoWay": {},
  "modified": {
   "name": 1
  },
  "current": {
   "name": 1
  },
  "threeWay": {},
  "result": {
   "name": 1
  }
 },
 {
  "description": "add field to map",
  "original": {
   "name": 1
  },
  "twoWay": {
   "value": 1
  },
  "modified": {
   "name": 1,
   "value": 1
  },
  "current": {
   "name": 1,
   "other": "a"
  },
  "threeWay": {
   "value": 1
  },
  "result": {
   "name": 1,
   "value": 1,
   "other": "a"
  }
 },
 {
  "description": "add field to map with conflict",
  "original": {
   "name": 1
  },
  "twoWay": {
   "value": 1
  },
  "modified": {
   "name": 1,
   "value": 1
  },
  "current": {
   "name": "a",
   "other": "a"
  },
  "threeWay": {
   "name": 1,
   "value": 1
  },
  "result": {
   "name": 1,
   "value": 1,
   "other": "a"
  }
 },
 {
  "description": "add field and delete field from map",
  "original": {
   "name": 1
  },
  "twoWay": {
   "name": null,
   "value": 1
  },
  "modified": {
   "value": 1
  },
  "current": {
   "name": 1,
   "other": "a"
  },
  "threeWay": {
   "name": null,
   "value": 1
  },
  "result": {
   "value": 1,
   "other": "a"
  }
 },
 {
  "description": "add field and delete field from map with conflict",
  "original": {
   "name": 1
  },
  "twoWay": {
   "name": null,
   "value": 1
  },
  "modified": {
   "value": 1
  },
  "current": {
   "name": "a",
   "other": "a"
  },
  "threeWay": {
   "name": null,
   "value": 1
  },
  "result": {
   "value": 1,
   "other": "a"
  }
 },
 {
  "description": "delete field from nested map",
  "original": {
   "simpleMap": {
    "key1": 1,
    "key2": 1
   }
  },
  "twoWay": {
   "simpleMap": {
    "key2": null
   }
  },
  "modified": {
   "simpleMap": {
    "key1": 1
   }
  },
  "current": {
   "simpleMap": {
    "key1": 1,
    "key2": 1,
    "other": "a"
   }
  },
  "threeWay": {
   "simpleMap": {
    "key2": null
   }
  },
  "result": {
   "simpleMap": {
    "key1": 1,
    "other": "a"
   }
  }
 },
 {
  "description": "delete field from nested map with conflict",
  "original": {
   "simpleMap": {
    "key1": 1,
    "key2": 1
   }
  },
  "twoWay": {
   "simpleMap": {
    "key2": null
   }
  },
  "modified": {
   "simpleMap": {
    "key1": 1
   }
  },
  "current": {
   "simpleMap": {
    "key1": "a",
    "key2": 1,
    "other": "a"
   }
  },
  "threeWay": {
   "simpleMap": {
    "key1": 1,
    "key2": null
   }
  },
  "result": {
   "simpleMap": {
    "key1": 1,
    "other": "a"
   }
  }
 },
 {
  "description": "delete all fields from map",
  "original": {
   "name": 1,
   "value": 1
  },
  "twoWay": {
   "name": null,
   "value": null
  },
  "modified": {},
  "current": {
   "name": 1,
   "value": 1,
   "other": "a"
  },
  "threeWay": {
   "name": null,
   "value": null
  },
  "result": {
   "other": "a"
  }
 },
 {
  "description": "delete all fields from map with conflict",
  "original": {
   "name": 1,
   "value": 1
  },
  "twoWay": {
   "name": null,
   "value": null
  },
  "modified": {},
  "current": {
   "name": 1,
   "value": "a",
   "other": "a"
  },
  "threeWay": {
   "name": null,
   "value": null
  },
  "result": {
   "other": "a"
  }
 },
 {
  "description": "add field and delete all fields from map",
  "original": {
   "name": 1,
   "value": 1
  },
  "twoWay": {
   "name": null,
   "value": null,
   "other": "a"
  },
  "modified": {
   "other": "a"
  },
  "current": {
   "name": 1,
   "value": 1,
   "other": "a"
  },
  "threeWay": {
   "name": null,
   "value": null
  },
  "result": {
   "other": "a"
  }
 },
 {
  "description": "add field and delete all fields from map with conflict",
  "original": {
   "name": 1,
   "value": 1
  },
  "twoWay": {
   "name": null,
   "value": null,
   "other": "a"
  },
  "modified": {
   "other": "a"
  },
  "current": {
   "name": 1,
   "value": 1,
   "other": "b"
  },
  "threeWay": {
   "name": null,
   "value": null,
   "other": "a"
  },
  "result": {
   "other": "a"
  }
 },
 {
  "description": "replace list of scalars",
  "original": {
   "nonMergingIntList": [
    1,
    2
   ]
  },
  "twoWay": {
   "nonMergingIntList": [
    2,
    3
   ]
  },
  "modified": {
   "nonMergingIntList": [
    2,
    3
   ]
  },
  "current": {
   "nonMergingIntList": [
    1,
    2
   ]
  },
  "threeWay": {
   "nonMergingIntList": [
    2,
    3
   ]
  },
  "result": {
   "nonMergingIntList": [
    2,
    3
   ]
  }
 },
 {
  "description": "replace list of scalars with conflict",
  "original": {
   "nonMergingIntList": [
    1,
    2
   ]
  },
  "twoWay": {
   "nonMergingIntList": [
    2,
    3
   ]
  },
  "modified": {
   "nonMergingIntList": [
    2,
    3
   ]
  },
  "current": {
   "nonMergingIntList": [
    1,
    4
   ]
  },
  "threeWay": {
   "nonMergingIntList": [
    2,
    3
   ]
  },
  "result": {
   "nonMergingIntList": [
    2,
    3
   ]
  }
 },
 {
  "description": "delete all maps from merging list",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ]
  },
  "twoWay": {
   "mergingList": [
    {
     "name": 1,
     "$patch": "delete"
    },
    {
     "name": 2,
     "$patch": "delete"
    }
   ]
  },
  "modified": {
   "mergingList": []
  },
  "current": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ]
  },
  "threeWay": {
   "mergingList": [
    {
     "name": 1,
     "$patch": "delete"
    },
    {
     "name": 2,
     "$patch": "delete"
    }
   ]
  },
  "result": {
   "mergingList": []
  }
 },
 {
  "description": "delete all maps from merging list with conflict",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ]
  },
  "twoWay": {
   "mergingList": [
    {
     "name": 1,
     "$patch": "delete"
    },
    {
     "name": 2,
     "$patch": "delete"
    }
   ]
  },
  "modified": {
   "mergingList": []
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  },
  "threeWay": {
   "mergingList": [
    {
     "name": 1,
     "$patch": "delete"
    },
    {
     "name": 2,
     "$patch": "delete"
    }
   ]
  },
  "result": {
   "mergingList": []
  }
 },
 {
  "description": "delete all maps from empty merging list",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ]
  },
  "twoWay": {
   "mergingList": [
    {
     "name": 1,
     "$patch": "delete"
    },
    {
     "name": 2,
     "$patch": "delete"
    }
   ]
  },
  "modified": {
   "mergingList": []
  },
  "current": {
   "mergingList": []
  },
  "threeWay": {
   "mergingList": [
    {
     "name": 1,
     "$patch": "delete"
    },
    {
     "name": 2,
     "$patch": "delete"
    }
   ]
  },
  "result": {
   "mergingList": []
  }
 },
 {
  "description": "merge empty merging lists",
  "original": {
   "mergingList": []
  },
  "twoWay": {},
  "modified": {
   "mergingList": []
  },
  "current": {
   "mergingList": []
  },
  "threeWay": {},
  "result": {
   "mergingList": []
  }
 },
 {
  "description": "defined null values should propagate overwrite current fields (with conflict)",
  "original": {
   "name": 2
  },
  "twoWay": {
   "name": 1,
   "value": 1,
   "other": null
  },
  "twoWayResult": {
   "name": 1,
   "value": 1
  },
  "modified": {
   "name": 1,
   "value": 1,
   "other": null
  },
  "current": {
   "name": "a",
   "other": "a"
  },
  "threeWay": {
   "name": 1,
   "value": 1,
   "other": null
  },
  "result": {
   "name": 1,
   "value": 1
  }
 },
 {
  "description": "defined null values should propagate removing original fields",
  "original": {
   "name": "original-name",
   "value": "original-value"
  },
  "current": {
   "name": "original-name",
   "value": "original-value",
   "other": "current-other"
  },
  "modified": {
   "name": "modified-name",
   "value": null
  },
  "twoWay": {
   "name": "modified-name",
   "value": null
  },
  "twoWayResult": {
   "name": "modified-name"
  },
  "threeWay": {
   "name": "modified-name",
   "value": null
  },
  "result": {
   "name": "modified-name",
   "other": "current-other"
  }
 },
 {
  "description": "nil patch with retainKeys map",
  "original": {
   "name": "a",
   "retainKeysMap": {
    "name": "foo"
   }
  },
  "current": {
   "name": "a",
   "value": "b",
   "retainKeysMap": {
    "name": "foo"
   }
  },
  "modified": {
   "name": "a",
   "retainKeysMap": {
    "name": "foo"
   }
  },
  "twoWay": {},
  "threeWay": {},
  "result": {
   "name": "a",
   "value": "b",
   "retainKeysMap": {
    "name": "foo"
   }
  }
 },
 {
  "description": "retainKeys map with no change should not be present",
  "original": {
   "name": "a",
   "retainKeysMap": {
    "name": "foo"
   }
  },
  "current": {
   "name": "a",
   "other": "c",
   "retainKeysMap": {
    "name": "foo"
   }
  },
  "modified": {
   "name": "a",
   "value": "b",
   "retainKeysMap": {
    "name": "foo"
   }
  },
  "twoWay": {
   "value": "b"
  },
  "threeWay": {
   "value": "b"
  },
  "result": {
   "name": "a",
   "value": "b",
   "other": "c",
   "retainKeysMap": {
    "name": "foo"
   }
  }
 }
];

export const customCases: K8sCase[] = [
 {
  "description": "unique scalars when merging lists",
  "original": {
   "mergingIntList": [
    1,
    2
   ]
  },
  "twoWay": {
   "mergingIntList": [
    2,
    3
   ]
  },
  "modified": {
   "mergingIntList": [
    1,
    2,
    3
   ]
  }
 },
 {
  "description": "delete map from nested map",
  "original": {
   "simpleMap": {
    "key1": 1,
    "key2": 1
   }
  },
  "twoWay": {
   "simpleMap": {
    "$patch": "delete"
   }
  },
  "modified": {
   "simpleMap": {}
  }
 },
 {
  "description": "delete all items from merging list",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ]
  },
  "twoWay": {
   "mergingList": [
    {
     "$patch": "replace"
    }
   ]
  },
  "modified": {
   "mergingList": []
  }
 },
 {
  "description": "merge empty merging lists",
  "original": {
   "mergingList": []
  },
  "twoWay": {
   "mergingList": []
  },
  "modified": {
   "mergingList": []
  }
 },
 {
  "description": "delete all keys from map",
  "original": {
   "name": 1,
   "value": 1
  },
  "twoWay": {
   "$patch": "replace"
  },
  "modified": {}
 },
 {
  "description": "add key and delete all keys from map",
  "original": {
   "name": 1,
   "value": 1
  },
  "twoWay": {
   "other": "a",
   "$patch": "replace"
  },
  "modified": {
   "other": "a"
  }
 },
 {
  "description": "delete all duplicate entries in a merging list",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 1
    },
    {
     "name": 2,
     "value": "a"
    },
    {
     "name": 3
    },
    {
     "name": 3
    }
   ]
  },
  "twoWay": {
   "mergingList": [
    {
     "name": 1,
     "$patch": "delete"
    },
    {
     "name": 3,
     "$patch": "delete"
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 2,
     "value": "a"
    }
   ]
  }
 },
 {
  "description": "retainKeys map can add a field when no retainKeys directive present",
  "original": {
   "retainKeysMap": {
    "name": "foo"
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "value": "bar"
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar"
   }
  }
 },
 {
  "description": "retainKeys map can change a field when no retainKeys directive present",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "value": "a"
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "value": "b"
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "b"
   }
  }
 },
 {
  "description": "retainKeys map can delete a field when no retainKeys directive present",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "value": "a"
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "value": null
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo"
   }
  }
 },
 {
  "description": "retainKeys map merge an empty map",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "value": "a"
   }
  },
  "twoWay": {
   "retainKeysMap": {}
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "a"
   }
  }
 },
 {
  "description": "retainKeys list can add a field when no retainKeys directive present",
  "original": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ]
  },
  "twoWay": {
   "retainKeysMergingList": [
    {
     "name": "foo",
     "value": "a"
    }
   ]
  },
  "modified": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "a"
    }
   ]
  }
 },
 {
  "description": "retainKeys list can change a field when no retainKeys directive present",
  "original": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "a"
    }
   ]
  },
  "twoWay": {
   "retainKeysMergingList": [
    {
     "name": "foo",
     "value": "b"
    }
   ]
  },
  "modified": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "b"
    }
   ]
  }
 },
 {
  "description": "retainKeys list can delete a field when no retainKeys directive present",
  "original": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "a"
    }
   ]
  },
  "twoWay": {
   "retainKeysMergingList": [
    {
     "name": "foo",
     "value": null
    }
   ]
  },
  "modified": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ]
  }
 },
 {
  "description": "preserve the order from the patch in a merging list",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": "b"
    },
    {
     "name": 3
    }
   ]
  },
  "twoWay": {
   "mergingList": [
    {
     "name": 3,
     "value": "c"
    },
    {
     "name": 1,
     "value": "a"
    },
    {
     "name": 2,
     "other": "x"
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 3,
     "value": "c"
    },
    {
     "name": 1,
     "value": "a"
    },
    {
     "name": 2,
     "value": "b",
     "other": "x"
    }
   ]
  }
 },
 {
  "description": "preserve the order from the patch in a merging list 2",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": "b"
    },
    {
     "name": 3
    }
   ]
  },
  "twoWay": {
   "mergingList": [
    {
     "name": 3,
     "value": "c"
    },
    {
     "name": 1,
     "value": "a"
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 2,
     "value": "b"
    },
    {
     "name": 3,
     "value": "c"
    },
    {
     "name": 1,
     "value": "a"
    }
   ]
  }
 },
 {
  "description": "preserve the order from the patch in a merging int list",
  "original": {
   "mergingIntList": [
    1,
    2,
    3
   ]
  },
  "twoWay": {
   "mergingIntList": [
    3,
    1,
    2
   ]
  },
  "modified": {
   "mergingIntList": [
    3,
    1,
    2
   ]
  }
 },
 {
  "description": "preserve the order from the patch in a merging int list",
  "original": {
   "mergingIntList": [
    1,
    2,
    3
   ]
  },
  "twoWay": {
   "mergingIntList": [
    3,
    1
   ]
  },
  "modified": {
   "mergingIntList": [
    2,
    3,
    1
   ]
  }
 }
];

export const customRawCases: K8sCase[] = [
 {
  "description": "$setElementOrder contains item that is not present in the list to be merged",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 3
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 1,
     "value": 1
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 3
    },
    {
     "name": 2
    },
    {
     "name": 1
    }
   ],
   "mergingList": [
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 1,
     "value": 1
    }
   ]
  }
 },
 {
  "description": "$setElementOrder contains item that is not present in the int list to be merged",
  "original": {
   "mergingIntList": [
    1,
    3
   ]
  },
  "modified": {
   "mergingIntList": [
    3,
    1
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingIntList": [
    3,
    2,
    1
   ]
  }
 },
 {
  "description": "should check if order in $setElementOrder and patch list match",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 3
    },
    {
     "name": 2
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ],
   "mergingList": [
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 1,
     "value": 1
    }
   ]
  },
  "expectedError": "doesn't match"
 },
 {
  "description": "$setElementOrder contains item that is not present in the int list to be merged",
  "original": {
   "mergingIntList": [
    1,
    3,
    2
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingIntList": [
    1,
    2,
    3
   ],
   "mergingIntList": [
    3,
    1
   ]
  },
  "expectedError": "doesn't match"
 },
 {
  "description": "missing merge key should error out",
  "original": {
   "mergingList": [
    {
     "name": 1,
     "value": "a"
    }
   ]
  },
  "twoWay": {
   "mergingList": [
    {
     "value": "b"
    }
   ]
  },
  "expectedError": "does not contain declared merge key"
 },
 {
  "description": "$deleteFromPrimitiveList of nonexistent item in primitive list should not add the item to the list",
  "original": {
   "mergingIntList": [
    1,
    2
   ]
  },
  "modified": {
   "mergingIntList": [
    1,
    2
   ]
  },
  "twoWay": {
   "$deleteFromPrimitiveList/mergingIntList": [
    3
   ]
  }
 },
 {
  "description": "$deleteFromPrimitiveList on empty primitive list should not add the item to the list",
  "original": {
   "mergingIntList": null
  },
  "modified": {
   "mergingIntList": null
  },
  "twoWay": {
   "$deleteFromPrimitiveList/mergingIntList": [
    3
   ]
  }
 },
 {
  "description": "$deleteFromPrimitiveList on nonexistent primitive list should not add the primitive list",
  "original": {
   "foo": [
    "bar"
   ]
  },
  "modified": {
   "foo": [
    "bar"
   ]
  },
  "twoWay": {
   "$deleteFromPrimitiveList/mergingIntList": [
    3
   ]
  }
 },
 {
  "description": "$deleteFromPrimitiveList should delete item from a list with merge patch strategy",
  "original": {
   "mergingIntList": [
    1,
    2,
    3
   ]
  },
  "modified": {
   "mergingIntList": [
    1,
    3
   ]
  },
  "twoWay": {
   "$deleteFromPrimitiveList/mergingIntList": [
    2
   ]
  }
 },
 {
  "description": "$deleteFromPrimitiveList should delete item from a list without merge patch strategy",
  "original": {
   "nonMergingIntList": [
    1,
    2,
    3
   ]
  },
  "modified": {
   "nonMergingIntList": [
    1,
    3
   ]
  },
  "twoWay": {
   "$deleteFromPrimitiveList/nonMergingIntList": [
    2
   ]
  }
 }
];

export const rawCases: K8sCase[] = [
 {
  "description": "nested patch merge with empty list",
  "original": {
   "name": "hi"
  },
  "modified": {
   "name": "hi",
   "mergingList": [
    {
     "name": "hello"
    },
    {
     "$patch": "delete",
     "name": "doesntexist"
    }
   ]
  },
  "current": {
   "name": "hi",
   "mergingList": [
    {
     "name": "hello2"
    }
   ]
  },
  "twoWay": {
   "mergingList": [
    {
     "name": "hello"
    },
    {
     "$patch": "delete",
     "name": "doesntexist"
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": "hello"
    },
    {
     "name": "doesntexist"
    }
   ],
   "mergingList": [
    {
     "name": "hello"
    }
   ]
  },
  "result": {
   "name": "hi",
   "mergingList": [
    {
     "name": "hello"
    },
    {
     "name": "hello2"
    }
   ]
  },
  "twoWayResult": {
   "name": "hi",
   "mergingList": [
    {
     "name": "hello"
    }
   ]
  }
 },
 {
  "description": "delete items in lists of scalars",
  "original": {
   "mergingIntList": [
    1,
    2,
    3
   ]
  },
  "modified": {
   "mergingIntList": [
    1,
    2
   ]
  },
  "current": {
   "mergingIntList": [
    1,
    2,
    3,
    4
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingIntList": [
    1,
    2
   ],
   "$deleteFromPrimitiveList/mergingIntList": [
    3
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingIntList": [
    1,
    2
   ],
   "$deleteFromPrimitiveList/mergingIntList": [
    3
   ]
  },
  "result": {
   "mergingIntList": [
    1,
    2,
    4
   ]
  }
 },
 {
  "description": "delete all duplicate items in lists of scalars",
  "original": {
   "mergingIntList": [
    1,
    2,
    3,
    3
   ]
  },
  "modified": {
   "mergingIntList": [
    1,
    2
   ]
  },
  "current": {
   "mergingIntList": [
    1,
    2,
    3,
    3,
    4
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingIntList": [
    1,
    2
   ],
   "$deleteFromPrimitiveList/mergingIntList": [
    3
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingIntList": [
    1,
    2
   ],
   "$deleteFromPrimitiveList/mergingIntList": [
    3
   ]
  },
  "result": {
   "mergingIntList": [
    1,
    2,
    4
   ]
  }
 },
 {
  "description": "add and delete items in lists of scalars",
  "original": {
   "mergingIntList": [
    1,
    2,
    3
   ]
  },
  "modified": {
   "mergingIntList": [
    1,
    2,
    4
   ]
  },
  "current": {
   "mergingIntList": [
    1,
    2,
    3,
    4
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingIntList": [
    1,
    2,
    4
   ],
   "$deleteFromPrimitiveList/mergingIntList": [
    3
   ],
   "mergingIntList": [
    4
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingIntList": [
    1,
    2,
    4
   ],
   "$deleteFromPrimitiveList/mergingIntList": [
    3
   ]
  },
  "result": {
   "mergingIntList": [
    1,
    2,
    4
   ]
  }
 },
 {
  "description": "merge lists of maps",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 1
    },
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 3,
     "value": 3
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 4
    },
    {
     "name": 1
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ],
   "mergingList": [
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 3,
     "value": 3
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 4
    },
    {
     "name": 1
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ],
   "mergingList": [
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 3,
     "value": 3
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    },
    {
     "name": 3,
     "value": 3
    }
   ]
  }
 },
 {
  "description": "merge lists of maps with conflict",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 3,
     "value": 3
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 3,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ],
   "mergingList": [
    {
     "name": 3,
     "value": 3
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ],
   "mergingList": [
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 3,
     "value": 3
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    },
    {
     "name": 3,
     "value": 3
    }
   ]
  }
 },
 {
  "description": "add field to map in merging list",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1,
     "value": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": 1
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": 1
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "value": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "add field to map in merging list",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1,
     "value": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": 1
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": 1
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "value": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "add field to map in merging list with conflict",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1,
     "value": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 3,
     "value": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": 1
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "value": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 3,
     "value": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "add duplicate field to map in merging list",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1,
     "value": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "value": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": 1
    }
   ]
  },
  "threeWay": {},
  "result": {
   "mergingList": [
    {
     "name": 1,
     "value": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "add an item that already exists in current object in merging list",
  "original": {
   "mergingList": [
    {
     "name": 1,
     "value": "a"
    },
    {
     "name": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1,
     "value": "a"
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "value": "a",
     "other": "x"
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ],
   "mergingList": [
    {
     "name": 3
    }
   ]
  },
  "threeWay": {},
  "result": {
   "mergingList": [
    {
     "name": 1,
     "value": "a",
     "other": "x"
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ]
  }
 },
 {
  "description": "add duplicate field to map in merging list with conflict",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1,
     "value": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "value": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 3,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": 1
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "value": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "replace map field value in merging list",
  "original": {
   "mergingList": [
    {
     "name": 1,
     "value": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1,
     "value": "a"
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "value": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": "a"
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": "a"
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "value": "a",
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "replace map field value in merging list with conflict",
  "original": {
   "mergingList": [
    {
     "name": 1,
     "value": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1,
     "value": "a"
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "value": 3,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": "a"
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": "a"
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "value": "a",
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "delete map from merging list",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "$patch": "delete"
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "$patch": "delete"
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "delete map from merging list with conflict",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "$patch": "delete"
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "$patch": "delete"
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "delete missing map from merging list",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "$patch": "delete"
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "$patch": "delete"
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "delete missing map from merging list with conflict",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 3,
     "other": "a"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "$patch": "delete"
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 2
    },
    {
     "name": 1,
     "$patch": "delete"
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 2
    },
    {
     "name": 3,
     "other": "a"
    }
   ]
  }
 },
 {
  "description": "add map and delete map from merging list",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 2
    },
    {
     "name": 3
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "other": "b"
    },
    {
     "name": 4,
     "other": "c"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    },
    {
     "name": 3
    }
   ],
   "mergingList": [
    {
     "name": 3
    },
    {
     "name": 1,
     "$patch": "delete"
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    },
    {
     "name": 3
    }
   ],
   "mergingList": [
    {
     "name": 3
    },
    {
     "name": 1,
     "$patch": "delete"
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 2,
     "other": "b"
    },
    {
     "name": 4,
     "other": "c"
    },
    {
     "name": 3
    }
   ]
  }
 },
 {
  "description": "add map and delete map from merging list with conflict",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 2
    },
    {
     "name": 3
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 4,
     "other": "c"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    },
    {
     "name": 3
    }
   ],
   "mergingList": [
    {
     "name": 3
    },
    {
     "name": 1,
     "$patch": "delete"
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    },
    {
     "name": 3
    }
   ],
   "mergingList": [
    {
     "name": 2
    },
    {
     "name": 3
    },
    {
     "name": 1,
     "$patch": "delete"
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 4,
     "other": "c"
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ]
  }
 },
 {
  "description": "delete field from map in merging list",
  "original": {
   "mergingList": [
    {
     "name": 1,
     "value": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "value": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": null
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": null
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "delete field from map in merging list with conflict",
  "original": {
   "mergingList": [
    {
     "name": 1,
     "value": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "value": "a",
     "other": "a"
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": null
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": null
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  }
 },
 {
  "description": "delete missing field from map in merging list",
  "original": {
   "mergingList": [
    {
     "name": 1,
     "value": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": null
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": null
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "delete missing field from map in merging list with conflict",
  "original": {
   "mergingList": [
    {
     "name": 1,
     "value": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": null
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "value": null
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "replace non merging list nested in merging list",
  "original": {
   "mergingList": [
    {
     "name": 1,
     "nonMergingList": [
      {
       "name": 1
      },
      {
       "name": 2,
       "value": 2
      }
     ]
    },
    {
     "name": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1,
     "nonMergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    },
    {
     "name": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a",
     "nonMergingList": [
      {
       "name": 1
      },
      {
       "name": 2,
       "value": 2
      }
     ]
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "nonMergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "nonMergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "other": "a",
     "nonMergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "replace non merging list nested in merging list with value conflict",
  "original": {
   "mergingList": [
    {
     "name": 1,
     "nonMergingList": [
      {
       "name": 1
      },
      {
       "name": 2,
       "value": 2
      }
     ]
    },
    {
     "name": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1,
     "nonMergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    },
    {
     "name": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a",
     "nonMergingList": [
      {
       "name": 1,
       "value": "c"
      }
     ]
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "nonMergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "nonMergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "other": "a",
     "nonMergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "replace non merging list nested in merging list with deletion conflict",
  "original": {
   "mergingList": [
    {
     "name": 1,
     "nonMergingList": [
      {
       "name": 1
      },
      {
       "name": 2,
       "value": 2
      }
     ]
    },
    {
     "name": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1,
     "nonMergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    },
    {
     "name": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a",
     "nonMergingList": [
      {
       "name": 2,
       "value": 2
      }
     ]
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "nonMergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 1,
     "nonMergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "other": "a",
     "nonMergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "add field to map in merging list nested in merging list",
  "original": {
   "mergingList": [
    {
     "name": 1,
     "mergingList": [
      {
       "name": 1
      },
      {
       "name": 2,
       "value": 2
      }
     ]
    },
    {
     "name": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1,
     "mergingList": [
      {
       "name": 1,
       "value": 1
      },
      {
       "name": 2,
       "value": 2
      }
     ]
    },
    {
     "name": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a",
     "mergingList": [
      {
       "name": 1
      },
      {
       "name": 2,
       "value": 2
      }
     ]
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "$setElementOrder/mergingList": [
      {
       "name": 1
      },
      {
       "name": 2
      }
     ],
     "name": 1,
     "mergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "$setElementOrder/mergingList": [
      {
       "name": 1
      },
      {
       "name": 2
      }
     ],
     "name": 1,
     "mergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "other": "a",
     "mergingList": [
      {
       "name": 1,
       "value": 1
      },
      {
       "name": 2,
       "value": 2
      }
     ]
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "add field to map in merging list nested in merging list with value conflict",
  "original": {
   "mergingList": [
    {
     "name": 1,
     "mergingList": [
      {
       "name": 1
      },
      {
       "name": 2,
       "value": 2
      }
     ]
    },
    {
     "name": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1,
     "mergingList": [
      {
       "name": 1,
       "value": 1
      },
      {
       "name": 2,
       "value": 2
      }
     ]
    },
    {
     "name": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a",
     "mergingList": [
      {
       "name": 1,
       "value": "a",
       "other": "c"
      },
      {
       "name": 2,
       "value": "b",
       "other": "d"
      }
     ]
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "$setElementOrder/mergingList": [
      {
       "name": 1
      },
      {
       "name": 2
      }
     ],
     "name": 1,
     "mergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "$setElementOrder/mergingList": [
      {
       "name": 1
      },
      {
       "name": 2
      }
     ],
     "name": 1,
     "mergingList": [
      {
       "name": 1,
       "value": 1
      },
      {
       "name": 2,
       "value": 2
      }
     ]
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "other": "a",
     "mergingList": [
      {
       "name": 1,
       "value": 1,
       "other": "c"
      },
      {
       "name": 2,
       "value": 2,
       "other": "d"
      }
     ]
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "add field to map in merging list nested in merging list with deletion conflict",
  "original": {
   "mergingList": [
    {
     "name": 1,
     "mergingList": [
      {
       "name": 1
      },
      {
       "name": 2,
       "value": 2
      }
     ]
    },
    {
     "name": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1,
     "mergingList": [
      {
       "name": 1,
       "value": 1
      },
      {
       "name": 2,
       "value": 2
      }
     ]
    },
    {
     "name": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a",
     "mergingList": [
      {
       "name": 2,
       "value": 2,
       "other": "d"
      }
     ]
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "$setElementOrder/mergingList": [
      {
       "name": 1
      },
      {
       "name": 2
      }
     ],
     "name": 1,
     "mergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "$setElementOrder/mergingList": [
      {
       "name": 1
      },
      {
       "name": 2
      }
     ],
     "name": 1,
     "mergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "other": "a",
     "mergingList": [
      {
       "name": 1,
       "value": 1
      },
      {
       "name": 2,
       "value": 2,
       "other": "d"
      }
     ]
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "add field to map in merging list nested in merging list with deletion conflict",
  "original": {
   "mergingList": [
    {
     "name": 1,
     "mergingList": [
      {
       "name": 1
      },
      {
       "name": 2,
       "value": 2
      }
     ]
    },
    {
     "name": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1,
     "mergingList": [
      {
       "name": 2,
       "value": 2
      },
      {
       "name": 1,
       "value": 1
      }
     ]
    },
    {
     "name": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a",
     "mergingList": [
      {
       "name": 2,
       "value": 2,
       "other": "d"
      }
     ]
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "$setElementOrder/mergingList": [
      {
       "name": 2
      },
      {
       "name": 1
      }
     ],
     "name": 1,
     "mergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "$setElementOrder/mergingList": [
      {
       "name": 2
      },
      {
       "name": 1
      }
     ],
     "name": 1,
     "mergingList": [
      {
       "name": 1,
       "value": 1
      }
     ]
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "other": "a",
     "mergingList": [
      {
       "name": 2,
       "value": 2,
       "other": "d"
      },
      {
       "name": 1,
       "value": 1
      }
     ]
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "add map to merging list by pointer",
  "original": {
   "mergeItemPtr": [
    {
     "name": 1
    }
   ]
  },
  "modified": {
   "mergeItemPtr": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ]
  },
  "current": {
   "mergeItemPtr": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 3
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergeItemPtr": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergeItemPtr": [
    {
     "name": 2
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergeItemPtr": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergeItemPtr": [
    {
     "name": 2
    }
   ]
  },
  "result": {
   "mergeItemPtr": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ]
  }
 },
 {
  "description": "add map to merging list by pointer with conflict",
  "original": {
   "mergeItemPtr": [
    {
     "name": 1
    }
   ]
  },
  "modified": {
   "mergeItemPtr": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ]
  },
  "current": {
   "mergeItemPtr": [
    {
     "name": 3
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergeItemPtr": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergeItemPtr": [
    {
     "name": 2
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergeItemPtr": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergeItemPtr": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ]
  },
  "result": {
   "mergeItemPtr": [
    {
     "name": 1
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ]
  }
 },
 {
  "description": "add field to map in merging list by pointer",
  "original": {
   "mergeItemPtr": [
    {
     "name": 1,
     "mergeItemPtr": [
      {
       "name": 1
      },
      {
       "name": 2,
       "value": 2
      }
     ]
    },
    {
     "name": 2
    }
   ]
  },
  "modified": {
   "mergeItemPtr": [
    {
     "name": 1,
     "mergeItemPtr": [
      {
       "name": 1,
       "value": 1
      },
      {
       "name": 2,
       "value": 2
      }
     ]
    },
    {
     "name": 2
    }
   ]
  },
  "current": {
   "mergeItemPtr": [
    {
     "name": 1,
     "other": "a",
     "mergeItemPtr": [
      {
       "name": 1,
       "other": "a"
      },
      {
       "name": 2,
       "value": 2,
       "other": "b"
      }
     ]
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergeItemPtr": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergeItemPtr": [
    {
     "$setElementOrder/mergeItemPtr": [
      {
       "name": 1
      },
      {
       "name": 2
      }
     ],
     "name": 1,
     "mergeItemPtr": [
      {
       "name": 1,
       "value": 1
      }
     ]
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergeItemPtr": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergeItemPtr": [
    {
     "$setElementOrder/mergeItemPtr": [
      {
       "name": 1
      },
      {
       "name": 2
      }
     ],
     "name": 1,
     "mergeItemPtr": [
      {
       "name": 1,
       "value": 1
      }
     ]
    }
   ]
  },
  "result": {
   "mergeItemPtr": [
    {
     "name": 1,
     "other": "a",
     "mergeItemPtr": [
      {
       "name": 1,
       "value": 1,
       "other": "a"
      },
      {
       "name": 2,
       "value": 2,
       "other": "b"
      }
     ]
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "add field to map in merging list by pointer with conflict",
  "original": {
   "mergeItemPtr": [
    {
     "name": 1,
     "mergeItemPtr": [
      {
       "name": 1
      },
      {
       "name": 2,
       "value": 2
      }
     ]
    },
    {
     "name": 2
    }
   ]
  },
  "modified": {
   "mergeItemPtr": [
    {
     "name": 1,
     "mergeItemPtr": [
      {
       "name": 1,
       "value": 1
      },
      {
       "name": 2,
       "value": 2
      }
     ]
    },
    {
     "name": 2
    }
   ]
  },
  "current": {
   "mergeItemPtr": [
    {
     "name": 1,
     "other": "a",
     "mergeItemPtr": [
      {
       "name": 1,
       "value": "a"
      },
      {
       "name": 2,
       "value": 2,
       "other": "b"
      }
     ]
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergeItemPtr": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergeItemPtr": [
    {
     "$setElementOrder/mergeItemPtr": [
      {
       "name": 1
      },
      {
       "name": 2
      }
     ],
     "name": 1,
     "mergeItemPtr": [
      {
       "name": 1,
       "value": 1
      }
     ]
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergeItemPtr": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergeItemPtr": [
    {
     "$setElementOrder/mergeItemPtr": [
      {
       "name": 1
      },
      {
       "name": 2
      }
     ],
     "name": 1,
     "mergeItemPtr": [
      {
       "name": 1,
       "value": 1
      }
     ]
    }
   ]
  },
  "result": {
   "mergeItemPtr": [
    {
     "name": 1,
     "other": "a",
     "mergeItemPtr": [
      {
       "name": 1,
       "value": 1
      },
      {
       "name": 2,
       "value": 2,
       "other": "b"
      }
     ]
    },
    {
     "name": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "merge lists of scalars",
  "original": {
   "mergingIntList": [
    1,
    2
   ]
  },
  "modified": {
   "mergingIntList": [
    1,
    2,
    3
   ]
  },
  "current": {
   "mergingIntList": [
    1,
    2,
    4
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingIntList": [
    1,
    2,
    3
   ],
   "mergingIntList": [
    3
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingIntList": [
    1,
    2,
    3
   ],
   "mergingIntList": [
    3
   ]
  },
  "result": {
   "mergingIntList": [
    1,
    2,
    3,
    4
   ]
  }
 },
 {
  "description": "add duplicate field to map in merging int list",
  "original": {
   "mergingIntList": [
    1,
    2
   ]
  },
  "modified": {
   "mergingIntList": [
    1,
    2,
    3
   ]
  },
  "current": {
   "mergingIntList": [
    1,
    2,
    3
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingIntList": [
    1,
    2,
    3
   ],
   "mergingIntList": [
    3
   ]
  },
  "threeWay": {},
  "result": {
   "mergingIntList": [
    1,
    2,
    3
   ]
  }
 },
 {
  "description": "add an item in a list of primitives and preserve order",
  "original": {
   "mergingIntList": [
    1,
    2
   ]
  },
  "modified": {
   "mergingIntList": [
    3,
    1,
    2
   ]
  },
  "current": {
   "mergingIntList": [
    1,
    4,
    2
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingIntList": [
    3,
    1,
    2
   ],
   "mergingIntList": [
    3
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingIntList": [
    3,
    1,
    2
   ],
   "mergingIntList": [
    3
   ]
  },
  "result": {
   "mergingIntList": [
    3,
    1,
    4,
    2
   ]
  }
 },
 {
  "description": "delete an item in a list of primitives and preserve order",
  "original": {
   "mergingIntList": [
    1,
    2,
    3
   ]
  },
  "modified": {
   "mergingIntList": [
    2,
    1
   ]
  },
  "current": {
   "mergingIntList": [
    1,
    2,
    3
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingIntList": [
    2,
    1
   ],
   "$deleteFromPrimitiveList/mergingIntList": [
    3
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingIntList": [
    2,
    1
   ],
   "$deleteFromPrimitiveList/mergingIntList": [
    3
   ]
  },
  "result": {
   "mergingIntList": [
    2,
    1
   ]
  }
 },
 {
  "description": "add an item in a list and preserve order",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 3
    },
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 3,
     "value": 3
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 3
    },
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 3,
     "value": 3
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  }
 },
 {
  "description": "add multiple items in a list and preserve order",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 3,
     "value": 3
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 4
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ],
   "mergingList": [
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 3,
     "value": 3
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 4
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ],
   "mergingList": [
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 3,
     "value": 3
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    },
    {
     "name": 3,
     "value": 3
    }
   ]
  }
 },
 {
  "description": "delete an item in a list and preserve order",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 1
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    },
    {
     "name": 3,
     "value": 3
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    },
    {
     "name": 1
    }
   ],
   "mergingList": [
    {
     "name": 3,
     "$patch": "delete"
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    },
    {
     "name": 1
    }
   ],
   "mergingList": [
    {
     "name": 3,
     "$patch": "delete"
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 2,
     "value": 2,
     "other": "b"
    },
    {
     "name": 1,
     "other": "a"
    }
   ]
  }
 },
 {
  "description": "change an item in a list and preserve order",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 3,
     "value": "x"
    },
    {
     "name": 1
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    },
    {
     "name": 3,
     "value": 3
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    },
    {
     "name": 3
    },
    {
     "name": 1
    }
   ],
   "mergingList": [
    {
     "name": 3,
     "value": "x"
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    },
    {
     "name": 3
    },
    {
     "name": 1
    }
   ],
   "mergingList": [
    {
     "name": 3,
     "value": "x"
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 2,
     "value": 2,
     "other": "b"
    },
    {
     "name": 3,
     "value": "x"
    },
    {
     "name": 1,
     "other": "a"
    }
   ]
  }
 },
 {
  "description": "add and delete an item in a list and preserve order",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 1
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    },
    {
     "name": 3,
     "value": 3
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 4
    },
    {
     "name": 2
    },
    {
     "name": 1
    }
   ],
   "mergingList": [
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 3,
     "$patch": "delete"
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 4
    },
    {
     "name": 2
    },
    {
     "name": 1
    }
   ],
   "mergingList": [
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 3,
     "$patch": "delete"
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 2,
     "value": 2,
     "other": "b"
    },
    {
     "name": 1,
     "other": "a"
    }
   ]
  }
 },
 {
  "description": "set elements order in a list",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 1
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 4
    },
    {
     "name": 2
    },
    {
     "name": 3
    },
    {
     "name": 1
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 4
    },
    {
     "name": 2
    },
    {
     "name": 3
    },
    {
     "name": 1
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 1,
     "other": "a"
    }
   ]
  }
 },
 {
  "description": "set elements order in a list with server-only items",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 2,
     "value": 2
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 1
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 9
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 4
    },
    {
     "name": 2
    },
    {
     "name": 3
    },
    {
     "name": 1
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 4
    },
    {
     "name": 2
    },
    {
     "name": 3
    },
    {
     "name": 1
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 9
    }
   ]
  }
 },
 {
  "description": "set elements order in a list with server-only items 2",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 4,
     "value": 4
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 1
    },
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 3,
     "value": 3
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 9
    },
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 4,
     "value": 4
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    },
    {
     "name": 1
    },
    {
     "name": 4
    },
    {
     "name": 3
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    },
    {
     "name": 1
    },
    {
     "name": 4
    },
    {
     "name": 3
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 9
    },
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 3,
     "value": 3
    }
   ]
  }
 },
 {
  "description": "set elements order in a list with server-only items 3",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 4,
     "value": 4
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 1
    },
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 3,
     "value": 3
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 7
    },
    {
     "name": 9
    },
    {
     "name": 8
    },
    {
     "name": 3,
     "value": 3
    },
    {
     "name": 4,
     "value": 4
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    },
    {
     "name": 1
    },
    {
     "name": 4
    },
    {
     "name": 3
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    },
    {
     "name": 1
    },
    {
     "name": 4
    },
    {
     "name": 3
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 2,
     "value": 2
    },
    {
     "name": 1,
     "other": "a"
    },
    {
     "name": 7
    },
    {
     "name": 9
    },
    {
     "name": 8
    },
    {
     "name": 4,
     "value": 4
    },
    {
     "name": 3,
     "value": 3
    }
   ]
  }
 },
 {
  "description": "add an item in a int list and preserve order",
  "original": {
   "mergingIntList": [
    1,
    2
   ]
  },
  "modified": {
   "mergingIntList": [
    3,
    1,
    2
   ]
  },
  "current": {
   "mergingIntList": [
    1,
    2
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingIntList": [
    3,
    1,
    2
   ],
   "mergingIntList": [
    3
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingIntList": [
    3,
    1,
    2
   ],
   "mergingIntList": [
    3
   ]
  },
  "result": {
   "mergingIntList": [
    3,
    1,
    2
   ]
  }
 },
 {
  "description": "add multiple items in a int list and preserve order",
  "original": {
   "mergingIntList": [
    1,
    2
   ]
  },
  "modified": {
   "mergingIntList": [
    1,
    4,
    2,
    3
   ]
  },
  "current": {
   "mergingIntList": [
    1,
    2
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingIntList": [
    1,
    4,
    2,
    3
   ],
   "mergingIntList": [
    4,
    3
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingIntList": [
    1,
    4,
    2,
    3
   ],
   "mergingIntList": [
    4,
    3
   ]
  },
  "result": {
   "mergingIntList": [
    1,
    4,
    2,
    3
   ]
  }
 },
 {
  "description": "delete an item in a int list and preserve order",
  "original": {
   "mergingIntList": [
    1,
    3,
    2
   ]
  },
  "modified": {
   "mergingIntList": [
    2,
    1
   ]
  },
  "current": {
   "mergingIntList": [
    1,
    2,
    3
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingIntList": [
    2,
    1
   ],
   "$deleteFromPrimitiveList/mergingIntList": [
    3
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingIntList": [
    2,
    1
   ],
   "$deleteFromPrimitiveList/mergingIntList": [
    3
   ]
  },
  "result": {
   "mergingIntList": [
    2,
    1
   ]
  }
 },
 {
  "description": "add and delete an item in a int list and preserve order",
  "original": {
   "mergingIntList": [
    1,
    3,
    2
   ]
  },
  "modified": {
   "mergingIntList": [
    4,
    2,
    1
   ]
  },
  "current": {
   "mergingIntList": [
    1,
    2,
    3
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingIntList": [
    4,
    2,
    1
   ],
   "mergingIntList": [
    4
   ],
   "$deleteFromPrimitiveList/mergingIntList": [
    3
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingIntList": [
    4,
    2,
    1
   ],
   "mergingIntList": [
    4
   ],
   "$deleteFromPrimitiveList/mergingIntList": [
    3
   ]
  },
  "result": {
   "mergingIntList": [
    4,
    2,
    1
   ]
  }
 },
 {
  "description": "set elements order in a int list",
  "original": {
   "mergingIntList": [
    1,
    3,
    4,
    2
   ]
  },
  "modified": {
   "mergingIntList": [
    4,
    2,
    3,
    1
   ]
  },
  "current": {
   "mergingIntList": [
    1,
    3,
    4,
    2
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingIntList": [
    4,
    2,
    3,
    1
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingIntList": [
    4,
    2,
    3,
    1
   ]
  },
  "result": {
   "mergingIntList": [
    4,
    2,
    3,
    1
   ]
  }
 },
 {
  "description": "set elements order in a int list with server-only items",
  "original": {
   "mergingIntList": [
    1,
    3,
    4,
    2
   ]
  },
  "modified": {
   "mergingIntList": [
    4,
    2,
    3,
    1
   ]
  },
  "current": {
   "mergingIntList": [
    1,
    3,
    4,
    2,
    9
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingIntList": [
    4,
    2,
    3,
    1
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingIntList": [
    4,
    2,
    3,
    1
   ]
  },
  "result": {
   "mergingIntList": [
    4,
    2,
    3,
    1,
    9
   ]
  }
 },
 {
  "description": "set elements order in a int list with server-only items 2",
  "original": {
   "mergingIntList": [
    1,
    2,
    3,
    4
   ]
  },
  "modified": {
   "mergingIntList": [
    2,
    1,
    4,
    3
   ]
  },
  "current": {
   "mergingIntList": [
    1,
    2,
    9,
    3,
    4
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingIntList": [
    2,
    1,
    4,
    3
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingIntList": [
    2,
    1,
    4,
    3
   ]
  },
  "result": {
   "mergingIntList": [
    2,
    1,
    9,
    4,
    3
   ]
  }
 },
 {
  "description": "set elements order in a int list with server-only items 3",
  "original": {
   "mergingIntList": [
    1,
    2,
    3,
    4
   ]
  },
  "modified": {
   "mergingIntList": [
    2,
    1,
    4,
    3
   ]
  },
  "current": {
   "mergingIntList": [
    1,
    2,
    7,
    9,
    8,
    3,
    4
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingIntList": [
    2,
    1,
    4,
    3
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingIntList": [
    2,
    1,
    4,
    3
   ]
  },
  "result": {
   "mergingIntList": [
    2,
    1,
    7,
    9,
    8,
    4,
    3
   ]
  }
 },
 {
  "description": "behavior of set element order for a merging list with duplicate",
  "original": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": "dup1"
    },
    {
     "name": 3
    },
    {
     "name": 2,
     "value": "dup2"
    },
    {
     "name": 4
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": 2,
     "value": "dup1"
    },
    {
     "name": 1
    },
    {
     "name": 4
    },
    {
     "name": 3
    },
    {
     "name": 2,
     "value": "dup2"
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2,
     "value": "dup1"
    },
    {
     "name": 3
    },
    {
     "name": 2,
     "value": "dup2"
    },
    {
     "name": 4
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    },
    {
     "name": 1
    },
    {
     "name": 4
    },
    {
     "name": 3
    },
    {
     "name": 2
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 2
    },
    {
     "name": 1
    },
    {
     "name": 4
    },
    {
     "name": 3
    },
    {
     "name": 2
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": 2,
     "value": "dup1"
    },
    {
     "name": 2,
     "value": "dup2"
    },
    {
     "name": 1
    },
    {
     "name": 4
    },
    {
     "name": 3
    }
   ]
  },
  "twoWayResult": {
   "mergingList": [
    {
     "name": 2,
     "value": "dup1"
    },
    {
     "name": 2,
     "value": "dup2"
    },
    {
     "name": 1
    },
    {
     "name": 4
    },
    {
     "name": 3
    }
   ]
  }
 },
 {
  "description": "behavior of set element order for a merging int list with duplicate",
  "original": {
   "mergingIntList": [
    1,
    2,
    3,
    2,
    4
   ]
  },
  "modified": {
   "mergingIntList": [
    2,
    1,
    4,
    3,
    2
   ]
  },
  "current": {
   "mergingIntList": [
    1,
    2,
    3,
    2,
    4
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingIntList": [
    2,
    1,
    4,
    3,
    2
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingIntList": [
    2,
    1,
    4,
    3,
    2
   ]
  },
  "result": {
   "mergingIntList": [
    2,
    2,
    1,
    4,
    3
   ]
  },
  "twoWayResult": {
   "mergingIntList": [
    2,
    2,
    1,
    4,
    3
   ]
  }
 },
 {
  "description": "retainKeys map should clear defaulted field",
  "original": {},
  "modified": {
   "retainKeysMap": {
    "other": "bar"
   }
  },
  "current": {
   "retainKeysMap": {
    "value": "foo"
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "other": "bar"
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "other"
    ],
    "other": "bar"
   }
  },
  "result": {
   "retainKeysMap": {
    "other": "bar"
   }
  }
 },
 {
  "description": "retainKeys map should clear defaulted field with conflict (discriminated union)",
  "original": {},
  "modified": {
   "retainKeysMap": {
    "name": "type2",
    "other": "bar"
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "type1",
    "value": "foo"
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "name": "type2",
    "other": "bar"
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "other"
    ],
    "name": "type2",
    "other": "bar"
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "type2",
    "other": "bar"
   }
  }
 },
 {
  "description": "retainKeys map adds a field",
  "original": {
   "retainKeysMap": {
    "name": "foo"
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar"
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo"
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "value"
    ],
    "value": "bar"
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "value"
    ],
    "value": "bar"
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar"
   }
  }
 },
 {
  "description": "retainKeys map adds a field and clear a field",
  "original": {
   "retainKeysMap": {
    "name": "foo"
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar"
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "other": "a"
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "value"
    ],
    "value": "bar"
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "value"
    ],
    "value": "bar"
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar"
   }
  }
 },
 {
  "description": "retainKeys map deletes a field",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar"
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo"
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar"
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name"
    ],
    "value": null
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name"
    ],
    "value": null
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo"
   }
  }
 },
 {
  "description": "retainKeys map deletes a field and clears a field",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar"
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo"
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "other": "a"
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name"
    ],
    "value": null
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name"
    ],
    "value": null
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo"
   }
  }
 },
 {
  "description": "retainKeys map clears a field",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar"
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar"
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "other": "a"
   }
  },
  "twoWay": {},
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "value"
    ]
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar"
   }
  }
 },
 {
  "description": "retainKeys map nested map with no change",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "simpleMap": {
     "key1": "a"
    }
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "simpleMap": {
     "key1": "a"
    }
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "simpleMap": {
     "key1": "a"
    }
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "simpleMap",
     "value"
    ],
    "value": "bar"
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "simpleMap",
     "value"
    ],
    "value": "bar"
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "simpleMap": {
     "key1": "a"
    }
   }
  }
 },
 {
  "description": "retainKeys map adds a field in a nested map",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "simpleMap": {
     "key1": "a"
    }
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "simpleMap": {
     "key1": "a",
     "key2": "b"
    }
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "simpleMap": {
     "key1": "a",
     "key3": "c"
    }
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "simpleMap",
     "value"
    ],
    "simpleMap": {
     "key2": "b"
    }
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "simpleMap",
     "value"
    ],
    "simpleMap": {
     "key2": "b"
    }
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "simpleMap": {
     "key1": "a",
     "key2": "b",
     "key3": "c"
    }
   }
  }
 },
 {
  "description": "retainKeys map deletes a field in a nested map",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "simpleMap": {
     "key1": "a",
     "key2": "b"
    }
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "simpleMap": {
     "key1": "a"
    }
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "simpleMap": {
     "key1": "a",
     "key2": "b",
     "key3": "c"
    }
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "simpleMap",
     "value"
    ],
    "simpleMap": {
     "key2": null
    }
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "simpleMap",
     "value"
    ],
    "simpleMap": {
     "key2": null
    }
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "simpleMap": {
     "key1": "a",
     "key3": "c"
    }
   }
  }
 },
 {
  "description": "retainKeys map changes a field in a nested map",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "simpleMap": {
     "key1": "a",
     "key2": "b"
    }
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "simpleMap": {
     "key1": "x",
     "key2": "b"
    }
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "simpleMap": {
     "key1": "a",
     "key2": "b",
     "key3": "c"
    }
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "simpleMap",
     "value"
    ],
    "simpleMap": {
     "key1": "x"
    }
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "simpleMap",
     "value"
    ],
    "simpleMap": {
     "key1": "x"
    }
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "simpleMap": {
     "key1": "x",
     "key2": "b",
     "key3": "c"
    }
   }
  }
 },
 {
  "description": "retainKeys map changes a field in a nested map with conflict",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "simpleMap": {
     "key1": "old",
     "key2": "b"
    }
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "simpleMap": {
     "key1": "modified",
     "key2": "b"
    }
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "simpleMap": {
     "key1": "new",
     "key2": "b",
     "key3": "c"
    }
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "simpleMap",
     "value"
    ],
    "simpleMap": {
     "key1": "modified"
    }
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "simpleMap",
     "value"
    ],
    "simpleMap": {
     "key1": "modified"
    }
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "simpleMap": {
     "key1": "modified",
     "key2": "b",
     "key3": "c"
    }
   }
  }
 },
 {
  "description": "retainKeys map replaces non-merging list",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "c"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "nonMergingList",
     "value"
    ],
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "c"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "nonMergingList",
     "value"
    ],
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "c"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "c"
     },
     {
      "name": "b"
     }
    ]
   }
  }
 },
 {
  "description": "retainKeys map nested non-merging list with no change",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "nonMergingList",
     "value"
    ],
    "value": "bar"
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "nonMergingList",
     "value"
    ],
    "value": "bar"
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  }
 },
 {
  "description": "retainKeys map nested non-merging list with no change with conflict",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     },
     {
      "name": "c"
     }
    ]
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "nonMergingList",
     "value"
    ],
    "value": "bar"
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "nonMergingList",
     "value"
    ],
    "value": "bar",
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  }
 },
 {
  "description": "retainKeys map deletes nested non-merging list",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar"
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "value"
    ],
    "value": "bar",
    "nonMergingList": null
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "value"
    ],
    "value": "bar",
    "nonMergingList": null
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar"
   }
  }
 },
 {
  "description": "retainKeys map delete nested non-merging list with conflict",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar"
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "nonMergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     },
     {
      "name": "c"
     }
    ]
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "value"
    ],
    "value": "bar",
    "nonMergingList": null
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "value"
    ],
    "value": "bar",
    "nonMergingList": null
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar"
   }
  }
 },
 {
  "description": "retainKeys map nested merging int list with no change",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "mergingIntList": [
     1,
     2
    ]
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "mergingIntList": [
     1,
     2
    ]
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "mergingIntList": [
     1,
     2,
     3
    ]
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "mergingIntList",
     "name",
     "value"
    ],
    "value": "bar"
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "mergingIntList",
     "name",
     "value"
    ],
    "$setElementOrder/mergingIntList": [
     1,
     2
    ],
    "value": "bar"
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "mergingIntList": [
     1,
     2,
     3
    ]
   }
  }
 },
 {
  "description": "retainKeys map adds an item in nested merging int list",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "mergingIntList": [
     1,
     2
    ]
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "mergingIntList": [
     1,
     2,
     4
    ]
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "mergingIntList": [
     1,
     2,
     3
    ]
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$setElementOrder/mergingIntList": [
     1,
     2,
     4
    ],
    "$retainKeys": [
     "mergingIntList",
     "name"
    ],
    "mergingIntList": [
     4
    ]
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$setElementOrder/mergingIntList": [
     1,
     2,
     4
    ],
    "$retainKeys": [
     "mergingIntList",
     "name"
    ],
    "mergingIntList": [
     4
    ]
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "mergingIntList": [
     1,
     2,
     4,
     3
    ]
   }
  }
 },
 {
  "description": "retainKeys map deletes an item in nested merging int list",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "mergingIntList": [
     1,
     2,
     3
    ]
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "mergingIntList": [
     1,
     3
    ]
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "mergingIntList": [
     1,
     2,
     3,
     4
    ]
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "mergingIntList",
     "name"
    ],
    "$deleteFromPrimitiveList/mergingIntList": [
     2
    ],
    "$setElementOrder/mergingIntList": [
     1,
     3
    ]
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "mergingIntList",
     "name"
    ],
    "$deleteFromPrimitiveList/mergingIntList": [
     2
    ],
    "$setElementOrder/mergingIntList": [
     1,
     3
    ]
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "mergingIntList": [
     1,
     3,
     4
    ]
   }
  }
 },
 {
  "description": "retainKeys map adds an item and deletes an item in nested merging int list",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "mergingIntList": [
     1,
     2,
     3
    ]
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "mergingIntList": [
     1,
     3,
     5
    ]
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "mergingIntList": [
     1,
     2,
     3,
     4
    ]
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "mergingIntList",
     "name"
    ],
    "mergingIntList": [
     5
    ],
    "$deleteFromPrimitiveList/mergingIntList": [
     2
    ],
    "$setElementOrder/mergingIntList": [
     1,
     3,
     5
    ]
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "mergingIntList",
     "name"
    ],
    "mergingIntList": [
     5
    ],
    "$deleteFromPrimitiveList/mergingIntList": [
     2
    ],
    "$setElementOrder/mergingIntList": [
     1,
     3,
     5
    ]
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "mergingIntList": [
     1,
     3,
     5,
     4
    ]
   }
  }
 },
 {
  "description": "retainKeys map deletes nested merging int list",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "mergingIntList": [
     1,
     2,
     3
    ]
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo"
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "mergingIntList": [
     1,
     2,
     3
    ]
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name"
    ],
    "mergingIntList": null
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name"
    ],
    "mergingIntList": null
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo"
   }
  }
 },
 {
  "description": "retainKeys map nested merging list with no change",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     },
     {
      "name": "c"
     }
    ]
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "mergingList",
     "name",
     "value"
    ],
    "value": "bar"
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "mergingList",
     "name",
     "value"
    ],
    "$setElementOrder/mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ],
    "value": "bar"
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar",
    "mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     },
     {
      "name": "c"
     }
    ]
   }
  }
 },
 {
  "description": "retainKeys map adds an item in nested merging list",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     },
     {
      "name": "c"
     }
    ]
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     },
     {
      "name": "x"
     }
    ]
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "mergingList",
     "name"
    ],
    "$setElementOrder/mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     },
     {
      "name": "c"
     }
    ],
    "mergingList": [
     {
      "name": "c"
     }
    ]
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "mergingList",
     "name"
    ],
    "$setElementOrder/mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     },
     {
      "name": "c"
     }
    ],
    "mergingList": [
     {
      "name": "c"
     }
    ]
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     },
     {
      "name": "c"
     },
     {
      "name": "x"
     }
    ]
   }
  }
 },
 {
  "description": "retainKeys map changes an item in nested merging list",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b",
      "value": "foo"
     }
    ]
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b",
      "value": "bar"
     }
    ]
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b",
      "value": "foo"
     },
     {
      "name": "x"
     }
    ]
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "mergingList",
     "name"
    ],
    "$setElementOrder/mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ],
    "mergingList": [
     {
      "name": "b",
      "value": "bar"
     }
    ]
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "mergingList",
     "name"
    ],
    "$setElementOrder/mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ],
    "mergingList": [
     {
      "name": "b",
      "value": "bar"
     }
    ]
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b",
      "value": "bar"
     },
     {
      "name": "x"
     }
    ]
   }
  }
 },
 {
  "description": "retainKeys map deletes nested merging list",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar"
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "value"
    ],
    "value": "bar",
    "mergingList": null
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "name",
     "value"
    ],
    "value": "bar",
    "mergingList": null
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "value": "bar"
   }
  }
 },
 {
  "description": "retainKeys map deletes an item in nested merging list",
  "original": {
   "retainKeysMap": {
    "name": "foo",
    "mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     }
    ]
   }
  },
  "modified": {
   "retainKeysMap": {
    "name": "foo",
    "mergingList": [
     {
      "name": "a"
     }
    ]
   }
  },
  "current": {
   "retainKeysMap": {
    "name": "foo",
    "mergingList": [
     {
      "name": "a"
     },
     {
      "name": "b"
     },
     {
      "name": "x"
     }
    ]
   }
  },
  "twoWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "mergingList",
     "name"
    ],
    "$setElementOrder/mergingList": [
     {
      "name": "a"
     }
    ],
    "mergingList": [
     {
      "name": "b",
      "$patch": "delete"
     }
    ]
   }
  },
  "threeWay": {
   "retainKeysMap": {
    "$retainKeys": [
     "mergingList",
     "name"
    ],
    "$setElementOrder/mergingList": [
     {
      "name": "a"
     }
    ],
    "mergingList": [
     {
      "name": "b",
      "$patch": "delete"
     }
    ]
   }
  },
  "result": {
   "retainKeysMap": {
    "name": "foo",
    "mergingList": [
     {
      "name": "a"
     },
     {
      "name": "x"
     }
    ]
   }
  }
 },
 {
  "description": "retainKeys list of maps clears a field",
  "original": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "a"
    }
   ]
  },
  "modified": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "a"
    }
   ]
  },
  "current": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "a",
     "other": "x"
    }
   ]
  },
  "twoWay": {},
  "threeWay": {
   "$setElementOrder/retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ],
   "retainKeysMergingList": [
    {
     "$retainKeys": [
      "name",
      "value"
     ],
     "name": "foo"
    }
   ]
  },
  "result": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "a"
    }
   ]
  }
 },
 {
  "description": "retainKeys list of maps clears a field with conflict",
  "original": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "old"
    }
   ]
  },
  "modified": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "modified"
    }
   ]
  },
  "current": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "new",
     "other": "x"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ],
   "retainKeysMergingList": [
    {
     "$retainKeys": [
      "name",
      "value"
     ],
     "name": "foo",
     "value": "modified"
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ],
   "retainKeysMergingList": [
    {
     "$retainKeys": [
      "name",
      "value"
     ],
     "name": "foo",
     "value": "modified"
    }
   ]
  },
  "result": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "modified"
    }
   ]
  }
 },
 {
  "description": "retainKeys list of maps changes a field and clear a field",
  "original": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "old"
    }
   ]
  },
  "modified": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "new"
    }
   ]
  },
  "current": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "old",
     "other": "x"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ],
   "retainKeysMergingList": [
    {
     "$retainKeys": [
      "name",
      "value"
     ],
     "name": "foo",
     "value": "new"
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ],
   "retainKeysMergingList": [
    {
     "$retainKeys": [
      "name",
      "value"
     ],
     "name": "foo",
     "value": "new"
    }
   ]
  },
  "result": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "new"
    }
   ]
  }
 },
 {
  "description": "retainKeys list of maps changes a field and clear a field with conflict",
  "original": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "old"
    }
   ]
  },
  "modified": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "new"
    }
   ]
  },
  "current": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "modified",
     "other": "x"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ],
   "retainKeysMergingList": [
    {
     "$retainKeys": [
      "name",
      "value"
     ],
     "name": "foo",
     "value": "new"
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ],
   "retainKeysMergingList": [
    {
     "$retainKeys": [
      "name",
      "value"
     ],
     "name": "foo",
     "value": "new"
    }
   ]
  },
  "result": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "new"
    }
   ]
  }
 },
 {
  "description": "retainKeys list of maps adds a field",
  "original": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ]
  },
  "modified": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "a"
    }
   ]
  },
  "current": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ],
   "retainKeysMergingList": [
    {
     "$retainKeys": [
      "name",
      "value"
     ],
     "name": "foo",
     "value": "a"
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ],
   "retainKeysMergingList": [
    {
     "$retainKeys": [
      "name",
      "value"
     ],
     "name": "foo",
     "value": "a"
    }
   ]
  },
  "result": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "a"
    }
   ]
  }
 },
 {
  "description": "retainKeys list of maps adds a field and clear a field",
  "original": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ]
  },
  "modified": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "a"
    }
   ]
  },
  "current": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "other": "x"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ],
   "retainKeysMergingList": [
    {
     "$retainKeys": [
      "name",
      "value"
     ],
     "name": "foo",
     "value": "a"
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ],
   "retainKeysMergingList": [
    {
     "$retainKeys": [
      "name",
      "value"
     ],
     "name": "foo",
     "value": "a"
    }
   ]
  },
  "result": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "a"
    }
   ]
  }
 },
 {
  "description": "retainKeys list of maps deletes a field",
  "original": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "a"
    }
   ]
  },
  "modified": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ]
  },
  "current": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "a"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ],
   "retainKeysMergingList": [
    {
     "$retainKeys": [
      "name"
     ],
     "name": "foo",
     "value": null
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ],
   "retainKeysMergingList": [
    {
     "$retainKeys": [
      "name"
     ],
     "name": "foo",
     "value": null
    }
   ]
  },
  "result": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ]
  }
 },
 {
  "description": "retainKeys list of maps deletes a field and clear a field",
  "original": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "a"
    }
   ]
  },
  "modified": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ]
  },
  "current": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo",
     "value": "a",
     "other": "x"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ],
   "retainKeysMergingList": [
    {
     "$retainKeys": [
      "name"
     ],
     "name": "foo",
     "value": null
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ],
   "retainKeysMergingList": [
    {
     "$retainKeys": [
      "name"
     ],
     "name": "foo",
     "value": null
    }
   ]
  },
  "result": {
   "retainKeysMergingList": [
    {
     "name": "bar"
    },
    {
     "name": "foo"
    }
   ]
  }
 },
 {
  "description": "delete and reorder in one list, reorder in another",
  "original": {
   "mergingList": [
    {
     "name": "a",
     "value": "a"
    },
    {
     "name": "b",
     "value": "b"
    }
   ],
   "mergeItemPtr": [
    {
     "name": "c",
     "value": "c"
    },
    {
     "name": "d",
     "value": "d"
    }
   ]
  },
  "modified": {
   "mergingList": [
    {
     "name": "b",
     "value": "b"
    }
   ],
   "mergeItemPtr": [
    {
     "name": "d",
     "value": "d"
    },
    {
     "name": "c",
     "value": "c"
    }
   ]
  },
  "current": {
   "mergingList": [
    {
     "name": "a",
     "value": "a"
    },
    {
     "name": "b",
     "value": "b"
    }
   ],
   "mergeItemPtr": [
    {
     "name": "c",
     "value": "c"
    },
    {
     "name": "d",
     "value": "d"
    }
   ]
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": "b"
    }
   ],
   "$setElementOrder/mergeItemPtr": [
    {
     "name": "d"
    },
    {
     "name": "c"
    }
   ],
   "mergingList": [
    {
     "$patch": "delete",
     "name": "a"
    }
   ]
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": "b"
    }
   ],
   "$setElementOrder/mergeItemPtr": [
    {
     "name": "d"
    },
    {
     "name": "c"
    }
   ],
   "mergingList": [
    {
     "$patch": "delete",
     "name": "a"
    }
   ]
  },
  "result": {
   "mergingList": [
    {
     "name": "b",
     "value": "b"
    }
   ],
   "mergeItemPtr": [
    {
     "name": "d",
     "value": "d"
    },
    {
     "name": "c",
     "value": "c"
    }
   ]
  }
 }
];

export const rawExtensionCases: K8sCase[] = [
 {
  "description": "replace RawExtension field, rest unchanched",
  "original": {
   "name": "my-object",
   "value": "some-value",
   "other": "current-other",
   "replacingItem": {
    "Some": "Generic",
    "Yaml": "Inside",
    "The": "RawExtension",
    "Field": "Period"
   }
  },
  "modified": {
   "name": "my-object",
   "value": "some-value",
   "other": "current-other",
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ],
   "replacingItem": {
    "Newly": "Modified",
    "Yaml": "Inside",
    "The": "RawExtension"
   }
  },
  "current": {
   "name": "my-object",
   "value": "some-value",
   "other": "current-other",
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ],
   "replacingItem": {
    "Some": "Generic",
    "Yaml": "Inside",
    "The": "RawExtension",
    "Field": "Period"
   }
  },
  "twoWay": {
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ],
   "replacingItem": {
    "Newly": "Modified",
    "Yaml": "Inside",
    "The": "RawExtension"
   }
  },
  "threeWay": {
   "replacingItem": {
    "Newly": "Modified",
    "Yaml": "Inside",
    "The": "RawExtension"
   }
  },
  "result": {
   "name": "my-object",
   "value": "some-value",
   "other": "current-other",
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ],
   "replacingItem": {
    "Newly": "Modified",
    "Yaml": "Inside",
    "The": "RawExtension"
   }
  },
  "twoWayResult": {
   "name": "my-object",
   "value": "some-value",
   "other": "current-other",
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ],
   "replacingItem": {
    "Newly": "Modified",
    "Yaml": "Inside",
    "The": "RawExtension"
   }
  }
 },
 {
  "description": "replace RawExtension field and merge list",
  "original": {
   "name": "my-object",
   "value": "some-value",
   "other": "current-other",
   "mergingList": [
    {
     "name": 1
    }
   ],
   "replacingItem": {
    "Some": "Generic",
    "Yaml": "Inside",
    "The": "RawExtension",
    "Field": "Period"
   }
  },
  "modified": {
   "name": "my-object",
   "value": "some-value",
   "other": "current-other",
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "replacingItem": {
    "Newly": "Modified",
    "Yaml": "Inside",
    "The": "RawExtension"
   }
  },
  "current": {
   "name": "my-object",
   "value": "some-value",
   "other": "current-other",
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 3
    }
   ],
   "replacingItem": {
    "Some": "Generic",
    "Yaml": "Inside",
    "The": "RawExtension",
    "Field": "Period"
   }
  },
  "twoWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 2
    }
   ],
   "replacingItem": {
    "Newly": "Modified",
    "Yaml": "Inside",
    "The": "RawExtension"
   }
  },
  "threeWay": {
   "$setElementOrder/mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "mergingList": [
    {
     "name": 2
    }
   ],
   "replacingItem": {
    "Newly": "Modified",
    "Yaml": "Inside",
    "The": "RawExtension"
   }
  },
  "result": {
   "name": "my-object",
   "value": "some-value",
   "other": "current-other",
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    },
    {
     "name": 3
    }
   ],
   "replacingItem": {
    "Newly": "Modified",
    "Yaml": "Inside",
    "The": "RawExtension"
   }
  },
  "twoWayResult": {
   "name": "my-object",
   "value": "some-value",
   "other": "current-other",
   "mergingList": [
    {
     "name": 1
    },
    {
     "name": 2
    }
   ],
   "replacingItem": {
    "Newly": "Modified",
    "Yaml": "Inside",
    "The": "RawExtension"
   }
  }
 }
];
