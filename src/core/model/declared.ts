// The declared model, read from schema/*.graphql by `npm run model`: do not edit (change the SDL).
import type { ModelData } from './model.ts';

export const DECLARED = {
  "viewer": "user",
  "objects": [
    {
      "name": "User",
      "key": "user",
      "typeNumber": 3,
      "table": "users",
      "placeWith": null,
      "declaredAt": "schema/schema.graphql:94",
      "stored": [
        {
          "field": "username",
          "key": "username",
          "required": true,
          "maxLength": 30,
          "format": "HANDLE",
          "immutable": true,
          "uniqueIn": "username"
        },
        {
          "field": "displayName",
          "key": "displayName",
          "required": false,
          "maxLength": 100,
          "format": "TEXT",
          "immutable": false,
          "uniqueIn": null
        },
        {
          "field": "about",
          "key": "about",
          "required": false,
          "maxLength": 500,
          "format": "TEXT",
          "immutable": false,
          "uniqueIn": null
        }
      ],
      "refs": [],
      "counts": [
        {
          "field": "boardCount",
          "relation": "user_has_boards"
        },
        {
          "field": "pinCount",
          "relation": "user_has_pins"
        },
        {
          "field": "likeCount",
          "relation": "user_likes_pins"
        },
        {
          "field": "followerCount",
          "relation": "user_followed_by_users"
        },
        {
          "field": "followingCount",
          "relation": "user_follows_users"
        },
        {
          "field": "followedBoardCount",
          "relation": "user_follows_boards"
        }
      ],
      "viewerEdges": [
        {
          "field": "viewerFollows",
          "relation": "user_follows_users"
        }
      ],
      "productFields": [
        {
          "field": "activity",
          "file": "schema/schema.graphql",
          "line": 131,
          "column": 3
        },
        {
          "field": "latestActivity",
          "file": "schema/schema.graphql",
          "line": 137,
          "column": 3
        },
        {
          "field": "notifications",
          "file": "schema/schema.graphql",
          "line": 148,
          "column": 3
        }
      ]
    },
    {
      "name": "Board",
      "key": "board",
      "typeNumber": 2,
      "table": "boards",
      "placeWith": "owner",
      "declaredAt": "schema/schema.graphql:217",
      "stored": [
        {
          "field": "name",
          "key": "name",
          "required": true,
          "maxLength": 100,
          "format": "TEXT",
          "immutable": false,
          "uniqueIn": null
        },
        {
          "field": "description",
          "key": "description",
          "required": false,
          "maxLength": 2000,
          "format": "TEXT",
          "immutable": false,
          "uniqueIn": null
        }
      ],
      "refs": [
        {
          "field": "owner",
          "key": "owner_id",
          "to": "user",
          "owner": true,
          "listedIn": "user_has_boards",
          "onDelete": "DELETE"
        }
      ],
      "counts": [
        {
          "field": "pinCount",
          "relation": "board_has_pins"
        },
        {
          "field": "followerCount",
          "relation": "board_followed_by_users"
        }
      ],
      "viewerEdges": [
        {
          "field": "viewerFollows",
          "relation": "user_follows_boards"
        }
      ],
      "productFields": []
    },
    {
      "name": "Pin",
      "key": "pin",
      "typeNumber": 1,
      "table": "pins",
      "placeWith": "board",
      "declaredAt": "schema/schema.graphql:231",
      "stored": [
        {
          "field": "title",
          "key": "title",
          "required": false,
          "maxLength": 200,
          "format": "TEXT",
          "immutable": false,
          "uniqueIn": null
        },
        {
          "field": "description",
          "key": "description",
          "required": false,
          "maxLength": 2000,
          "format": "TEXT",
          "immutable": false,
          "uniqueIn": null
        },
        {
          "field": "link",
          "key": "link",
          "required": false,
          "maxLength": 2048,
          "format": "URL",
          "immutable": false,
          "uniqueIn": null
        },
        {
          "field": "imageUrl",
          "key": "imageUrl",
          "required": false,
          "maxLength": 2048,
          "format": "URL",
          "immutable": false,
          "uniqueIn": null
        }
      ],
      "refs": [
        {
          "field": "board",
          "key": "board_id",
          "to": "board",
          "owner": false,
          "listedIn": "board_has_pins",
          "onDelete": "DELETE"
        },
        {
          "field": "pinner",
          "key": "pinner_id",
          "to": "user",
          "owner": true,
          "listedIn": "user_has_pins",
          "onDelete": "DELETE"
        },
        {
          "field": "via",
          "key": "via_pin_id",
          "to": "pin",
          "owner": false,
          "listedIn": "pin_repinned_as_pins",
          "onDelete": "UNLINK"
        }
      ],
      "counts": [
        {
          "field": "likeCount",
          "relation": "pin_liked_by_users"
        },
        {
          "field": "repinCount",
          "relation": "pin_repinned_as_pins"
        },
        {
          "field": "commentCount",
          "relation": "pin_has_comments"
        }
      ],
      "viewerEdges": [
        {
          "field": "viewerHasLiked",
          "relation": "user_likes_pins"
        }
      ],
      "productFields": []
    },
    {
      "name": "Comment",
      "key": "comment",
      "typeNumber": 4,
      "table": "comments",
      "placeWith": "pin",
      "declaredAt": "schema/schema.graphql:254",
      "stored": [
        {
          "field": "text",
          "key": "text",
          "required": true,
          "maxLength": 1000,
          "format": "TEXT",
          "immutable": false,
          "uniqueIn": null
        }
      ],
      "refs": [
        {
          "field": "author",
          "key": "author_id",
          "to": "user",
          "owner": true,
          "listedIn": "user_wrote_comments",
          "onDelete": "DELETE"
        },
        {
          "field": "pin",
          "key": "pin_id",
          "to": "pin",
          "owner": false,
          "listedIn": "pin_has_comments",
          "onDelete": "DELETE"
        }
      ],
      "counts": [],
      "viewerEdges": [],
      "productFields": []
    }
  ],
  "relations": [
    {
      "table": "user_has_boards",
      "from": "user",
      "to": "board",
      "field": "boards",
      "inverse": null,
      "order": "TIME",
      "timeRange": false,
      "writer": "REF"
    },
    {
      "table": "user_has_pins",
      "from": "user",
      "to": "pin",
      "field": "pins",
      "inverse": null,
      "order": "TIME",
      "timeRange": true,
      "writer": "REF"
    },
    {
      "table": "user_likes_pins",
      "from": "user",
      "to": "pin",
      "field": "likedPins",
      "inverse": "pin_liked_by_users",
      "order": "TIME",
      "timeRange": true,
      "writer": "VIEWER"
    },
    {
      "table": "user_followed_by_users",
      "from": "user",
      "to": "user",
      "field": "followers",
      "inverse": "user_follows_users",
      "order": "TIME",
      "timeRange": false,
      "writer": "INVERSE"
    },
    {
      "table": "user_follows_users",
      "from": "user",
      "to": "user",
      "field": "following",
      "inverse": "user_followed_by_users",
      "order": "TIME",
      "timeRange": false,
      "writer": "VIEWER"
    },
    {
      "table": "user_follows_boards",
      "from": "user",
      "to": "board",
      "field": "followedBoards",
      "inverse": "board_followed_by_users",
      "order": "TIME",
      "timeRange": false,
      "writer": "VIEWER"
    },
    {
      "table": "user_wrote_comments",
      "from": "user",
      "to": "comment",
      "field": null,
      "inverse": null,
      "order": "TIME",
      "timeRange": false,
      "writer": "REF"
    },
    {
      "table": "board_has_pins",
      "from": "board",
      "to": "pin",
      "field": "pins",
      "inverse": null,
      "order": "OWNER",
      "timeRange": true,
      "writer": "REF"
    },
    {
      "table": "board_followed_by_users",
      "from": "board",
      "to": "user",
      "field": "followers",
      "inverse": "user_follows_boards",
      "order": "TIME",
      "timeRange": false,
      "writer": "INVERSE"
    },
    {
      "table": "pin_liked_by_users",
      "from": "pin",
      "to": "user",
      "field": "likers",
      "inverse": "user_likes_pins",
      "order": "TIME",
      "timeRange": false,
      "writer": "INVERSE"
    },
    {
      "table": "pin_has_comments",
      "from": "pin",
      "to": "comment",
      "field": "comments",
      "inverse": null,
      "order": "TIME",
      "timeRange": false,
      "writer": "REF"
    },
    {
      "table": "pin_repinned_as_pins",
      "from": "pin",
      "to": "pin",
      "field": "repins",
      "inverse": null,
      "order": "TIME",
      "timeRange": false,
      "writer": "REF"
    }
  ],
  "mutations": [
    {
      "name": "createUser",
      "action": "CUSTOM",
      "type": null,
      "relation": null,
      "argument": null
    },
    {
      "name": "updateViewer",
      "action": "CUSTOM",
      "type": null,
      "relation": null,
      "argument": null
    },
    {
      "name": "deleteViewer",
      "action": "CUSTOM",
      "type": null,
      "relation": null,
      "argument": null
    },
    {
      "name": "createBoard",
      "action": "CREATE",
      "type": "board",
      "relation": null,
      "argument": null
    },
    {
      "name": "updateBoard",
      "action": "UPDATE",
      "type": "board",
      "relation": null,
      "argument": "id"
    },
    {
      "name": "deleteBoard",
      "action": "DELETE",
      "type": "board",
      "relation": null,
      "argument": "id"
    },
    {
      "name": "createPin",
      "action": "CREATE",
      "type": "pin",
      "relation": null,
      "argument": null
    },
    {
      "name": "updatePin",
      "action": "UPDATE",
      "type": "pin",
      "relation": null,
      "argument": "id"
    },
    {
      "name": "deletePin",
      "action": "DELETE",
      "type": "pin",
      "relation": null,
      "argument": "id"
    },
    {
      "name": "repin",
      "action": "CUSTOM",
      "type": null,
      "relation": null,
      "argument": null
    },
    {
      "name": "movePin",
      "action": "REORDER",
      "type": null,
      "relation": "board_has_pins",
      "argument": "pinId"
    },
    {
      "name": "createComment",
      "action": "CREATE",
      "type": "comment",
      "relation": null,
      "argument": null
    },
    {
      "name": "deleteComment",
      "action": "DELETE",
      "type": "comment",
      "relation": null,
      "argument": "id"
    },
    {
      "name": "likePin",
      "action": "RELATE",
      "type": null,
      "relation": "user_likes_pins",
      "argument": "pinId"
    },
    {
      "name": "unlikePin",
      "action": "UNRELATE",
      "type": null,
      "relation": "user_likes_pins",
      "argument": "pinId"
    },
    {
      "name": "followUser",
      "action": "RELATE",
      "type": null,
      "relation": "user_follows_users",
      "argument": "userId"
    },
    {
      "name": "unfollowUser",
      "action": "UNRELATE",
      "type": null,
      "relation": "user_follows_users",
      "argument": "userId"
    },
    {
      "name": "followBoard",
      "action": "RELATE",
      "type": null,
      "relation": "user_follows_boards",
      "argument": "boardId"
    },
    {
      "name": "unfollowBoard",
      "action": "UNRELATE",
      "type": null,
      "relation": "user_follows_boards",
      "argument": "boardId"
    }
  ]
} as const satisfies ModelData;
